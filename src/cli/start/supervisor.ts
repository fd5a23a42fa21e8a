// The supervisor: runs the start sequence (sequence.ts), restarts a crashed local PostgreSQL or Temporal dev
// server in place once everything is up (restarts.ts), and owns the shutdown. Whatever ends it (Ctrl-C
// or SIGTERM forwarded by the launcher, the api or the worker exiting on its own, a dependency that could not
// be restarted, a failed step, a bug here, the launcher going away), everything started is stopped once and in order: the api and the worker first
// (SHUTDOWN_GRACE_MS plus 5 s to drain, then killed), then Temporal, then PostgreSQL. Then it exits: 0
// after a signal, 1 otherwise, 2 for a bad configuration. A second signal more than 2 s after the first
// kills the api, the worker and Temporal at once. A first-start API key the banner has not shown yet is
// printed before exiting.
import { Config, ConfigError, loadConfig } from '../../config';
import { describeExit, OnUnexpectedExit } from './children';
import { startLocalPostgres, startLocalTemporal } from './local-services';
import { red, say, shout } from './output';
import { Restarter } from './restarts';
import type { Running } from './running';
import type { FirstStart } from './database-setup';
import { resetLinkLines } from '../reset-link-lines';
import { run, temporalAddressOf } from './sequence';
import { joinPlatformGroup } from '../../runtime/sandbox/cgroups';
import { canSwitchUids, delegatedCgroupV2 } from '../../runtime/sandbox/isolation';

/** Extra time, beyond SHUTDOWN_GRACE_MS, before an api or worker that ignores SIGTERM is killed. */
const KILL_MARGIN_MS = 5_000;
const TEMPORAL_STOP_TIMEOUT_MS = 15_000;

export async function supervise(): Promise<void> {
  const running: Running = {};
  let stopping: Promise<void> | undefined;
  let firstSignalAt = 0;
  let firstStart: FirstStart | undefined;
  let ready = false;

  const shutdown = (exitCode: number, reason: string): Promise<void> => {
    stopping ??= (async () => {
      say(reason);
      const { api, worker, temporal } = running;
      const grace = config ? config.shutdownGraceMs + KILL_MARGIN_MS : KILL_MARGIN_MS;
      await Promise.all([api?.stop('SIGTERM', grace), worker?.stop('SIGTERM', grace)]);
      if (api || worker) say('api and worker stopped');
      if (running.embeddings) {
        await running.embeddings.stop('SIGTERM', KILL_MARGIN_MS);
        say('local embedding server stopped');
      }
      if (temporal) {
        temporal.quiet = true; // its shutdown is noisy about connections it is closing itself
        await temporal.stop('SIGTERM', TEMPORAL_STOP_TIMEOUT_MS);
        say('Temporal dev server stopped');
      }
      if (running.temporalEnv) {
        await running.temporalEnv.teardown().catch((err) => shout(`Temporal dev server: ${err}`));
        say('Temporal dev server stopped');
      }
      if (running.postgres) {
        await running.postgres.stop().catch((err) => shout(`PostgreSQL: ${err}`));
        say('PostgreSQL stopped');
      }
      if (firstStart && !ready && config) {
        say(
          `The API key created on this first start (it will not be shown again):\n  ${firstStart.apiKey}\n` +
            resetLinkLines(config.publicBaseUrl, firstStart.resetToken, firstStart.resetExpiresAt).join('\n'),
        );
      }
      say(exitCode === 0 ? 'stopped' : red(`stopped (exit ${exitCode})`));
      process.exit(exitCode);
    })();
    return stopping;
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) {
      firstSignalAt = Date.now();
      void shutdown(0, `${signal}: stopping api and worker, then Temporal, then PostgreSQL...`);
    } else if (Date.now() - firstSignalAt > 2000) {
      // A deliberate second Ctrl-C (not the same one delivered twice by npm and the terminal).
      shout(`${signal} again: killing the api, worker and Temporal now`);
      running.api?.kill();
      running.worker?.kill();
      running.embeddings?.kill();
      running.temporal?.kill();
    }
  };
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);
  // A bug here must not leave the children running without their supervisor.
  const onCrash = (err: unknown) => {
    shout(`supervisor error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    void shutdown(1, 'stopping everything after the error above');
  };
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  // The launcher holds the other end of stdin: end of file means it is gone.
  process.stdin.on('end', () => void shutdown(1, 'the launcher went away: stopping everything'));
  process.stdin.on('error', () => undefined);
  process.stdin.resume();

  // Once everything is up, a crashed local PostgreSQL or Temporal dev server is restarted in place (restarts.ts);
  // the api and the worker keep running. Only when restarts keep failing does everything stop.
  const giveUp = (reason: string) => {
    if (stopping) return;
    shout(`!!! ${reason}; stopping everything`);
    void shutdown(1, 'stopping everything: a dependency could not be restarted');
  };
  const isStopping = () => stopping !== undefined;
  const restarters: Record<string, Restarter> = {
    PostgreSQL: new Restarter('PostgreSQL', () => startLocalPostgres(config!, running, onUnexpectedExit), {
      isStopping,
      giveUp,
    }),
    temporal: new Restarter(
      'The Temporal dev server',
      () => startLocalTemporal(config!, temporalAddressOf(config!), running, onUnexpectedExit, isStopping),
      { isStopping, giveUp },
    ),
  };

  const onUnexpectedExit: OnUnexpectedExit = (name, code, signal) => {
    if (stopping) return;
    const restarter = restarters[name];
    if (ready && restarter) {
      restarter.crashed(describeExit(code, signal));
      return;
    }
    shout('');
    shout(`!!! ${name} exited unexpectedly (${describeExit(code, signal)}); stopping everything`);
    shout('');
    void shutdown(1, `stopping because ${name} exited`);
  };

  let config: Config | undefined;
  try {
    try {
      config = loadConfig();
    } catch (err) {
      if (err instanceof ConfigError) {
        shout(err.message);
        process.exit(2);
      }
      throw err;
    }
    // Everything started from here (PostgreSQL, Temporal, api, worker) shares the platform's CPU weight,
    // above that of the runs (src/runtime/sandbox/cgroups.ts). The worker itself refuses to run user code
    // without control groups; here a failure is only said.
    // (The rootless mode without a delegated cgroup v2 has no control groups at all: nothing to join.)
    if (config.sandbox.mode === 'on' && (canSwitchUids() || delegatedCgroupV2())) {
      const why = joinPlatformGroup(config.sandbox.platformCpuWeight);
      if (why) say(`not in the platform's control group: ${why}`);
    }
    await run(config, running, onUnexpectedExit, {
      isStopping,
      setFirstStart: (first) => (firstStart = first),
      setReady: () => (ready = true),
    });
  } catch (err) {
    if (stopping) return; // failures caused by the shutdown itself
    shout(err instanceof Error ? err.message : String(err));
    await shutdown(1, 'start failed; stopping what was started');
  }
}
