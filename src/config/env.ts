// The one reader of environment variables. Every value is trimmed, and a blank one counts as unset (so
// `FOO= ` in an env file means the default); a bad value becomes a problem naming the variable and the value,
// and the reader goes on with the default so that one start reports every problem (ConfigError).
import { parseOutboundAllow, type HostPort, type OutboundAllow } from '../security/outbound-policy';

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * The limits of one kind of job (a run, a deployment, a data job...): every kind has this one shape, as
 * `config.<kind>Job` in the section that owns the kind, read by EnvReader.jobLimits.
 */
export interface JobLimits {
  /** Wall time of one job of the kind (a workflow timer); past it the job ends with TimeLimitExceeded. */
  timeLimitSeconds: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

const TRUE_WORDS = ['true', '1', 'yes', 'on'];
const FALSE_WORDS = ['false', '0', 'no', 'off'];

export class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  /** Records a problem found by a section's own check (two settings that must go together, say). */
  problem(message: string): void {
    this.problems.push(message);
  }

  /** Throws one ConfigError naming every problem recorded so far. */
  throwIfProblems(): void {
    if (this.problems.length) throw new ConfigError([...this.problems]);
  }

  /** The trimmed value; undefined when unset or blank. */
  optional(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  string(name: string, fallback: string): string {
    return this.optional(name) ?? fallback;
  }

  /** An integer in [min, max]. */
  int(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      this.problem(`${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return n;
  }

  /** A kind of job's limits: its wall time from `timeName` (`..._TIME_LIMIT_SECONDS`), in [1, maxSeconds]. */
  jobLimits(timeName: string, fallbackSeconds: number, maxSeconds?: number): JobLimits {
    return { timeLimitSeconds: this.int(timeName, fallbackSeconds, 1, maxSeconds) };
  }

  /** `true`/`false` (also 1/0, yes/no, on/off), any case. */
  bool(name: string, fallback: boolean): boolean {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const word = raw.toLowerCase();
    if (TRUE_WORDS.includes(word)) return true;
    if (FALSE_WORDS.includes(word)) return false;
    this.problem(`${name} must be true or false, got ${JSON.stringify(raw)}`);
    return fallback;
  }

  /** One of `choices` (matched lower-cased). */
  oneOf<T extends string>(name: string, fallback: T, choices: readonly T[]): T {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const choice = choices.find((c) => c === raw.toLowerCase());
    if (choice !== undefined) return choice;
    const expected =
      choices.length === 2
        ? `${choices[0]} or ${choices[1]}`
        : `one of ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`;
    this.problem(`${name} must be ${expected}, got ${JSON.stringify(raw)}`);
    return fallback;
  }

  /** A URL (any scheme), without trailing slashes; undefined when unset and no fallback. */
  url(name: string): string | undefined;
  url(name: string, fallback: string): string;
  url(name: string, fallback?: string): string | undefined {
    const raw = this.optional(name) ?? fallback;
    if (raw === undefined) return undefined;
    if (!URL.canParse(raw)) this.problem(`${name} must be a URL, got ${JSON.stringify(raw)}`);
    return raw.replace(/\/+$/, '');
  }

  /** An http(s) URL, without trailing slashes. `label` names it in the problem when it is part of a setting. */
  httpUrl(name: string, fallback: string, label = name): string {
    const raw = this.optional(name) ?? fallback;
    return this.checkHttpUrl(raw, label) ? raw.replace(/\/+$/, '') : raw;
  }

  /** Whether `raw` is an http(s) URL; a problem naming `label` when not. */
  checkHttpUrl(raw: string, label: string): boolean {
    const protocol = URL.canParse(raw) ? new URL(raw).protocol : undefined;
    if (protocol === 'http:' || protocol === 'https:') return true;
    this.problem(`${label} must be an http(s) URL, got ${JSON.stringify(raw)}`);
    return false;
  }

  /** A comma-separated list, each entry trimmed, empty entries dropped. */
  list(name: string, fallback = ''): string[] {
    return (this.optional(name) ?? fallback)
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
  }

  /** A comma-separated list of CIDRs (`10.1.0.0/16,127.0.0.0/8`). */
  cidrs(name: string): string[] {
    const list = this.list(name);
    for (const c of list) {
      if (!/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(c))
        this.problem(`${name} entries must be CIDRs (10.1.0.0/16), got ${JSON.stringify(c)}`);
    }
    return list;
  }

  /** CIDRs and `host:port` pairs (an IPv6 address in brackets: `[::1]:11434`), as OUTBOUND_ALLOW takes them. */
  outboundAllow(name: string): OutboundAllow {
    return parseOutboundAllow(this.optional(name) ?? '', name, this.problems);
  }

  /** `host:port` pairs only. */
  hostPorts(name: string): HostPort[] {
    const allow = this.outboundAllow(name);
    if (allow.cidrs.length)
      this.problem(
        `${name} takes host:port pairs only (ranges go in SANDBOX_ALLOW_CIDRS), got ${allow.cidrs.join(', ')}`,
      );
    return allow.hostPorts;
  }

  /** Variables whose name passes `keep`, untrimmed: they are handed on to child processes as they are. */
  passThrough(keep: (name: string) => boolean): Record<string, string> {
    const picked: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.env)) if (value !== undefined && keep(name)) picked[name] = value;
    return picked;
  }
}

/**
 * Environment for a child process of `npm start` (api, worker, temporal, tools/obtain-temporal.sh): this
 * process's environment with the given overrides (undefined removes a variable).
 */
export function childEnv(overrides: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}
