import { startStack, stopStack } from '../harness/stack';

/** Root hooks: one real stack for the whole run. */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(300_000);
    await startStack();
  },
  async afterAll(this: Mocha.Context) {
    // Removing the stack's directory includes every deployment's virtualenv: the compat suite's three
    // griptape builds alone took 53 s to delete on a loaded machine.
    this.timeout(180_000);
    await stopStack();
  },
};
