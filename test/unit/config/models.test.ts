// Parsing of the model-provider settings (MODEL_PROVIDERS, keys, OPENAI_API_KEY shortcut, DEFAULT_MODEL).
import { expect } from 'chai';
import { loadConfig } from '../../../src/config';
import { DEFAULT_MODEL_INPUTS, modelMatches } from '../../../src/config/model-inputs';
import { configProblems } from '../../support/config-problems';

const models = (env: Record<string, string>) => loadConfig(env).models;
const problems = configProblems;

describe('config: model providers', () => {
  it('has no provider, no default model and the documented limits by default', () => {
    expect(models({})).to.deep.equal({
      providers: {},
      defaultModel: undefined,
      inputs: DEFAULT_MODEL_INPUTS,
      timeoutSeconds: 600,
      maxRetries: 2,
    });
  });

  it('reads MODEL_PROVIDERS with a key per provider', () => {
    expect(
      models({
        MODEL_PROVIDERS: ' ollama=http://127.0.0.1:11434/v1/ , my-vllm=https://vllm.internal:8000/v1,,',
        MODEL_PROVIDER_MY_VLLM_API_KEY: 'vllm-key',
        DEFAULT_MODEL: 'ollama/llama3.2',
        MODEL_REQUEST_TIMEOUT_SECONDS: '30',
        MODEL_MAX_RETRIES: '0',
      }),
    ).to.deep.equal({
      providers: {
        ollama: { baseUrl: 'http://127.0.0.1:11434/v1' },
        'my-vllm': { baseUrl: 'https://vllm.internal:8000/v1', apiKey: 'vllm-key' },
      },
      defaultModel: 'ollama/llama3.2',
      inputs: DEFAULT_MODEL_INPUTS,
      timeoutSeconds: 30,
      maxRetries: 0,
    });
  });

  it('makes OPENAI_API_KEY alone a provider `openai`, at OPENAI_BASE_URL when set', () => {
    expect(models({ OPENAI_API_KEY: 'sk-1', DEFAULT_MODEL: 'openai/gpt-4.1-mini' }).providers).to.deep.equal({
      openai: { baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-1' },
    });
    expect(
      models({ OPENAI_API_KEY: 'sk-1', OPENAI_BASE_URL: 'https://proxy.example/v1' }).providers.openai,
    ).to.deep.equal({ baseUrl: 'https://proxy.example/v1', apiKey: 'sk-1' });
  });

  it('keeps an `openai` entry of MODEL_PROVIDERS, its own key first, else OPENAI_API_KEY', () => {
    expect(models({ MODEL_PROVIDERS: 'openai=https://gw.example/v1', OPENAI_API_KEY: 'sk-1' }).providers).to.deep.equal(
      { openai: { baseUrl: 'https://gw.example/v1', apiKey: 'sk-1' } },
    );
    expect(
      models({
        MODEL_PROVIDERS: 'openai=https://gw.example/v1',
        OPENAI_API_KEY: 'sk-1',
        MODEL_PROVIDER_OPENAI_API_KEY: 'sk-2',
      }).providers,
    ).to.deep.equal({ openai: { baseUrl: 'https://gw.example/v1', apiKey: 'sk-2' } });
  });

  it('refuses malformed entries, duplicates and bad URLs, naming each', () => {
    expect(
      problems({
        MODEL_PROVIDERS: 'Bad Name=http://x/v1,noequals,dup=http://a/v1,dup=http://b/v1,ftp=ftp://x/v1,worse=not a url',
      }),
    ).to.deep.equal([
      'MODEL_PROVIDERS entries must be name=baseURL with a name of [a-z0-9_-], got "Bad Name=http://x/v1"',
      'MODEL_PROVIDERS entries must be name=baseURL with a name of [a-z0-9_-], got "noequals"',
      'MODEL_PROVIDERS names provider "dup" twice',
      'MODEL_PROVIDERS entry "ftp" must be an http(s) URL, got "ftp://x/v1"',
      'MODEL_PROVIDERS entry "worse" must be an http(s) URL, got "not a url"',
    ]);
    expect(problems({ OPENAI_API_KEY: 'sk', OPENAI_BASE_URL: 'nope' })).to.deep.equal([
      'OPENAI_BASE_URL must be an http(s) URL, got "nope"',
    ]);
  });

  it('stops start on a DEFAULT_MODEL that is not provider/model of a configured provider', () => {
    expect(problems({ DEFAULT_MODEL: 'gpt-4.1-mini', OPENAI_API_KEY: 'sk' })).to.deep.equal([
      'DEFAULT_MODEL must be provider/model (e.g. openai/gpt-4.1-mini), got "gpt-4.1-mini"',
    ]);
    const [unknown] = problems({ DEFAULT_MODEL: 'ollama/llama3.2', OPENAI_API_KEY: 'sk' });
    expect(unknown).to.include('DEFAULT_MODEL names provider "ollama", which is not configured (configured: openai)');
    expect(unknown).to.include('MODEL_PROVIDERS=ollama=http://127.0.0.1:11434/v1');
    expect(problems({ DEFAULT_MODEL: 'openai/' })[0]).to.include('must be provider/model');
  });

  it('bounds the timeout and the retries', () => {
    expect(problems({ MODEL_REQUEST_TIMEOUT_SECONDS: '0', MODEL_MAX_RETRIES: '-1' })).to.deep.equal([
      'MODEL_REQUEST_TIMEOUT_SECONDS must be an integer in [1, 86400], got "0"',
      'MODEL_MAX_RETRIES must be an integer in [0, 10], got "-1"',
    ]);
  });

  it('reads which models take images, audio and video: patterns per content type, or none', () => {
    const inputs = models({
      MODEL_IMAGE_INPUT: 'ollama/llava*, vllm/Qwen/Qwen2.5-VL-7B-Instruct',
      MODEL_AUDIO_INPUT: 'none',
      MODEL_VIDEO_INPUT: 'vllm/*',
    }).inputs;
    expect(inputs).to.deep.equal({
      image: ['ollama/llava*', 'vllm/Qwen/Qwen2.5-VL-7B-Instruct'],
      audio: [],
      video: ['vllm/*'],
    });
    expect(modelMatches(inputs.image, 'ollama/llava:13b')).to.equal(true);
    expect(modelMatches(inputs.image, 'ollama/llama3.2')).to.equal(false);
    expect(modelMatches(DEFAULT_MODEL_INPUTS.image, 'openai/gpt-4o-mini')).to.equal(true);
    expect(modelMatches(DEFAULT_MODEL_INPUTS.image, 'openai/o3-mini')).to.equal(false);
    expect(modelMatches(DEFAULT_MODEL_INPUTS.audio, 'openai/gpt-4o-audio-preview-2024-12-17')).to.equal(true);
    const bad = problems({ MODEL_IMAGE_INPUT: 'llava, ollama/ll*ava' });
    expect(bad).to.have.length(2);
    expect(bad[0]).to.contain('MODEL_IMAGE_INPUT entries must be provider/model').and.contain('"llava"');
  });
});
