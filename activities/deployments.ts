// Deployment activities: the status writes of the deployment workflow (src/services/code/deployment-steps.ts)
// and the long build activity (fetch the source, read the config file, build, write the manifest), which
// heartbeats throughout and kills its build processes when cancelled (time limit, worker shutdown).
import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { buildBlobPrefix } from '../src/blobs/keys';
import type { DeploymentStatus } from '../src/persistence/entities/deployment';
import { OutputTail } from '../src/runtime/build/build-process';
import { buildEnvironment, buildProject } from '../src/runtime/build/build';
import { readDeployConfig } from '../src/runtime/build/config-file';
import { BuildQuotaWatch } from '../src/runtime/build/disk-quota';
import { DeploymentFailure } from '../src/runtime/build/failure';
import { organizationCache, trimCache, withGroupUmask } from '../src/runtime/build/package-cache';
import type { BuildManifest } from '../src/runtime/manifest';
import { readUntrustedText } from '../src/runtime/untrusted-file';
import { sandboxIdentityFor } from '../src/services/code/sandbox-identity';
import { CgroupUnavailable } from '../src/runtime/sandbox/cgroups';
import { fetchSource, Fetched } from '../src/runtime/source/fetch';
import { codeLocationToken } from '../src/services/accounts/connections';
import { fingerprintOf, openAccessToken } from '../src/services/code/deployments';
import { finishDeployment, openDeployment, type DeploymentOutcome } from '../src/services/code/deployment-steps';
import type { DeploymentInput } from '../src/temporal/contracts';
import { DEPLOYMENT_JOB } from '../src/jobs/kinds';
import { goesOn, startJob } from '../src/jobs/start';
import { outboundPolicyFor } from '../src/security/outbound-policy';
import { heartbeatEveryMs, shutdownFailure, withHeartbeats } from './heartbeat';
import { deployMcpTool } from '../src/services/code/mcp-tools';

/** Bytes of build output kept in status_detail.build_output_tail. */
const OUTPUT_TAIL_BYTES = 4096;

/**
 * The version of the build's interpreter, read rather than run: a build's own steps may have replaced
 * anything in its venv (pyvenv.cfg by a link to a root-only file or to a FIFO), so it is read as an untrusted
 * file, and the platform never runs the build's files outside the sandbox. Refused: no version reported.
 */
async function interpreterVersion(manifest: BuildManifest, buildPath: string): Promise<string | undefined> {
  if (manifest.runtime === 'nodejs') return `node ${process.version}`;
  const cfg = (await readUntrustedText(buildPath, 'venv/pyvenv.cfg', { maxBytes: 64 * 1024 })) ?? '';
  const version = /^version(?:_info)?\s*=\s*([0-9][\w.]*)/m.exec(cfg)?.[1];
  return version ? `Python ${version}` : undefined;
}

export function createDeploymentActivities({ ds, config, blobs, box, log, sandbox, builds }: ActivityDeps) {
  return {
    /** QUEUED → DEPLOYING. False when the deployment already ended, or its row never became visible. */
    async beginDeployment(input: { deploymentId: string }): Promise<boolean> {
      return goesOn(DEPLOYMENT_JOB, await startJob(ds, DEPLOYMENT_JOB, input.deploymentId));
    },

    /** Builds the deployment into <buildDir>/<deployment_id> and answers how it went; never writes its status. */
    async buildDeployment(input: DeploymentInput): Promise<DeploymentOutcome> {
      const ctx = Context.current();
      const row = await openDeployment(ds, input.deploymentId);
      if (!row) {
        return { status: 'ERROR', detail: { reason: 'AlreadyEnded', message: 'The deployment already ended' } };
      }
      // A tool of `mcp` code builds nothing: its deployment lists the server's tools (src/services/code/mcp-tools.ts).
      if ('mcp' in input.code) {
        const { mcp } = input.code;
        const deps = { ds, box, policy: outboundPolicyFor(config), maxResponseBytes: config.runLimits.resultBytes };
        return withHeartbeats((_beat, signal) => deployMcpTool(deps, row.organization_id, mcp, signal));
      }
      const buildPath = path.join(config.buildDir, input.deploymentId);
      // A retried attempt starts from nothing: what an earlier attempt left is incomplete.
      await fs.rm(buildPath, { recursive: true, force: true });
      await fs.mkdir(buildPath, { recursive: true });
      // Sandboxed code may pass through the builds root to its own build, never list it.
      if (sandbox.enabled) await fs.chmod(config.buildDir, 0o711);
      let token: string | undefined;
      try {
        // The request's own token, else the token of the connection the code location names (if any).
        token = input.sealedAccessToken
          ? openAccessToken(box, input.deploymentId, input.sealedAccessToken)
          : await codeLocationToken({ ds, box, config }, row.organization_id, input.code);
      } catch (err) {
        if (!(err instanceof DeploymentFailure)) throw err;
        await fs.rm(buildPath, { recursive: true, force: true });
        return { status: 'FAILED', detail: { reason: err.reason, message: err.message } };
      }
      const output = new OutputTail(OUTPUT_TAIL_BYTES, token ? [token] : []);
      const beat = setInterval(() => ctx.heartbeat(), heartbeatEveryMs(ctx));
      const home = path.join(buildPath, 'home');
      let identity;
      try {
        identity = await sandboxIdentityFor(ds, sandbox, row.organization_id, config.runLimits.memoryMb * 1024 * 1024);
      } catch (err) {
        // Fail closed: no control group, no build.
        clearInterval(beat);
        await fs.rm(buildPath, { recursive: true, force: true });
        if (!(err instanceof CgroupUnavailable)) throw err;
        return {
          status: 'ERROR',
          detail: { reason: 'SandboxUnavailable', message: `The build could not be isolated: ${err.message}` },
        };
      }
      // pip and npm download caches: one per organization when sandboxed (a shared one could be poisoned).
      const cacheDir = identity
        ? await organizationCache(config.buildDir, identity.gid, sandbox.mode === 'root')
        : path.join(config.buildDir, '.cache');
      await fs.mkdir(home, { recursive: true });
      // The build's steps are user code, and so is a git clone of the user's repository: they run as the
      // build's own uid, writing only the build and the cache (and seeing `readOnly`: a local code host).
      const isolate = (command: { file: string; argv: string[]; cwd: string }, extra?: { readOnly?: string[] }) =>
        sandbox.wrap({
          ...withGroupUmask(command),
          home,
          identity,
          memoryBytes: config.runLimits.memoryMb * 1024 * 1024,
          writable: [buildPath, cacheDir],
          readOnly: extra?.readOnly,
        });
      let fetched: Fetched | undefined;
      let quota: BuildQuotaWatch | undefined;
      try {
        ctx.heartbeat();
        await fs.mkdir(cacheDir, { recursive: true });
        // BUILD_DISK_MB and BUILD_CACHE_MB: past either, the running step is stopped as if cancelled.
        quota = await BuildQuotaWatch.start({ buildPath, cacheDir, quota: config.buildQuota });
        const cancelled = Promise.race([ctx.cancelled, quota.exceeded]);
        cancelled.catch(() => undefined);
        const common = { output, cancelled };
        if (identity && 'codehost' in input.code) await sandbox.chownTree(buildPath, identity);
        const sourceRoot = path.join(buildPath, 'src');
        fetched = await fetchSource(
          {
            ds,
            blobs,
            codehostBaseUrl: config.codehostBaseUrl,
            outbound: outboundPolicyFor(config),
            organizationId: row.organization_id,
            scratchDir: path.join(buildPath, 'download'),
            maxUnpackedBytes: config.buildQuota.diskBytes,
            env: buildEnvironment(config.buildEnv, config.nodeRuntime, home, cacheDir),
            git: { isolate, limits: config.git },
            ...common,
          },
          input.kind,
          input.code,
          sourceRoot,
          { commitSha: input.commitSha, accessToken: token },
        );
        const deployConfig = await readDeployConfig(sourceRoot, input.configFile, input.kind);
        if (identity) await sandbox.chownTree(buildPath, identity);
        const manifest = await buildProject(
          {
            buildPath,
            home,
            cacheDir,
            passthroughEnv: config.buildEnv,
            nodeRuntime: config.nodeRuntime,
            isolate,
            ...common,
          },
          deployConfig,
        );
        quota.stop();
        await quota.check(); // what the last second wrote
        await identity?.release();
        // Then the build belongs to the platform, readable by the organization's group only.
        if (identity) await sandbox.chownTree(buildPath, { platformFor: identity.gid });
        // Into the blob store, so that every worker can run it (this one keeps its own copy).
        const artifact = await builds.publish(input.deploymentId, buildPath);
        return {
          status: 'SUCCEEDED',
          buildPath,
          artifact,
          codeSource: fetched.codeSource,
          fingerprint: fingerprintOf(input.kind, input.code, input.configFile, fetched),
          detail: {
            reason: 'Deployed',
            runtime: manifest.runtime,
            ...(deployConfig.runtimeVersion ? { runtime_version: deployConfig.runtimeVersion } : {}),
            interpreter_version: await interpreterVersion(manifest, buildPath),
          },
        };
      } catch (err) {
        await fs.rm(buildPath, { recursive: true, force: true }).catch(() => undefined);
        if (err instanceof DeploymentFailure) {
          return {
            status: 'FAILED',
            detail: { reason: err.reason, message: err.message, build_output_tail: output.text() },
            codeSource: fetched?.codeSource,
          };
        }
        // A worker shutting down is not the deployment's end: fail this attempt so a retry (elsewhere) builds it.
        const shutdown = shutdownFailure(err, 'this deployment');
        if (shutdown) throw shutdown;
        if (!(err instanceof CancelledFailure))
          log.warn({ err, deploymentId: input.deploymentId, output: output.text() }, 'deployment build fault');
        throw err;
      } finally {
        quota?.stop();
        clearInterval(beat);
        await identity?.release();
        await trimCache(cacheDir, config.buildQuota.cacheBytes).catch((err: unknown) =>
          log.warn({ err, cacheDir }, 'could not trim the package cache'),
        );
      }
    },

    /** The terminal write (idempotent). A deployment deleted meanwhile (with its resource) leaves no build behind. */
    async finishDeployment(input: {
      deploymentId: string;
      outcome: DeploymentOutcome;
    }): Promise<DeploymentStatus | 'MISSING'> {
      const { outcome } = input;
      const row = await finishDeployment(ds, input.deploymentId, outcome);
      // A build no row points at (deleted meanwhile, or the deployment had already ended) is garbage.
      if (outcome.status === 'SUCCEEDED' && outcome.buildPath !== null && row?.build_path !== outcome.buildPath) {
        await builds.forget(input.deploymentId);
        await fs.rm(outcome.buildPath, { recursive: true, force: true });
        if (outcome.artifact) await blobs.deletePrefix(buildBlobPrefix(input.deploymentId));
      }
      return row ? row.status : 'MISSING';
    },
  };
}
