import { startStack, stopStack } from './stack';

/** Root hooks: one real stack for the whole run. */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(300_000);
    await startStack();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await stopStack();
  },
};
