import type { LimitReason } from '../sandbox/limits';

// How a deployment ends when it is not a success. A DeploymentFailure is the user's to fix (broken config,
// failed install, missing main file): the deployment ends FAILED with {reason, message, build_output_tail}.
// Anything else thrown while deploying is an infrastructure fault and ends the deployment ERROR.

export type FailureReason =
  | 'SourceUnavailable'
  | 'UnsafeArchive'
  | 'InvalidArchive'
  | 'CloneFailed'
  /** A git source with a link out of its tree or a special file (GIT_* limits: docs/configuration.md). */
  | 'UnsafeRepository'
  /** A git source larger than GIT_MAX_MB, or slower to clone than GIT_TIME_LIMIT_SECONDS. */
  | 'RepositoryTooLarge'
  /** The connection a codehost code location names is gone, or its token expired and cannot be refreshed. */
  | 'ConnectionUnavailable'
  | 'ConfigNotFound'
  | 'InvalidConfig'
  | 'FileNotFound'
  | 'ScriptFailed'
  | 'InstallFailed'
  /** The build's directory outgrew BUILD_DISK_MB (the step was stopped). */
  | 'DiskQuotaExceeded'
  /** The build added more than BUILD_CACHE_MB to its organization's package cache. */
  | 'CacheQuotaExceeded'
  /** A build step stopped by a resource limit of the sandbox (src/runtime/sandbox/limits.ts). */
  | LimitReason;

export class DeploymentFailure extends Error {
  constructor(
    readonly reason: FailureReason,
    message: string,
  ) {
    super(message);
  }
}
