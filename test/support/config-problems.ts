// What loadConfig refuses: the problems of its ConfigError for an environment (the config unit tests' one way
// to read them).
import { ConfigError, loadConfig } from '../../src/config';

/** The problems loadConfig(env) reports; fails when it accepts env. */
export const configProblems = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
};
