// Every kind of job's limits have one shape, `config.<kind>Job`, read by EnvReader.jobLimits: each kind's
// variable, default and bounds, as docs/configuration.md lists them.
import { expect } from 'chai';
import { ConfigError, loadConfig, type JobLimits } from '../../../src/config';

const DAY = 24 * 3600;
const NO_MAX = Number.MAX_SAFE_INTEGER;

const KINDS: { key: keyof ReturnType<typeof loadConfig>; name: string; fallback: number; max: number }[] = [
  { key: 'runJob', name: 'RUN_TIME_LIMIT_SECONDS', fallback: 3600, max: NO_MAX },
  { key: 'deploymentJob', name: 'DEPLOYMENT_TIME_LIMIT_SECONDS', fallback: 1800, max: NO_MAX },
  { key: 'dataJob', name: 'DATA_JOB_TIME_LIMIT_SECONDS', fallback: 3600, max: 7 * DAY },
  { key: 'integrationDeliveryJob', name: 'INTEGRATION_DELIVERY_TIME_LIMIT_SECONDS', fallback: 3600, max: 7 * DAY },
  { key: 'chatMessageJob', name: 'CHAT_MESSAGE_TIME_LIMIT_SECONDS', fallback: 900, max: DAY },
  { key: 'knowledgeBaseJob', name: 'KNOWLEDGE_BASE_JOB_TIME_LIMIT_SECONDS', fallback: 3600, max: 7 * DAY },
];

const limitsOf = (env: Record<string, string>, key: (typeof KINDS)[number]['key']) => loadConfig(env)[key] as JobLimits;

describe('config: job limits', () => {
  for (const { key, name, fallback, max } of KINDS) {
    it(`${key}: ${name}, ${fallback} s by default, in [1, ${max}]`, () => {
      expect(limitsOf({}, key)).to.deep.equal({ timeLimitSeconds: fallback });
      expect(limitsOf({ [name]: '1' }, key)).to.deep.equal({ timeLimitSeconds: 1 });
      expect(limitsOf({ [name]: String(max) }, key)).to.deep.equal({ timeLimitSeconds: max });
      for (const bad of ['0', String(max + 1), '1.5']) {
        expect(() => loadConfig({ [name]: bad }), bad)
          .to.throw(ConfigError)
          .with.property('message')
          .that.matches(new RegExp(`${name} must be an integer in \\[1, ${max}\\]`));
      }
    });
  }
});
