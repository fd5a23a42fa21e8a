// Tool runs through HTTP on the real stack: the default tool's OpenAPI document and echo activity, unknown
// activities, an activity that raises (the `{error, tool_run_id}` body GriptapeCloudToolTool reads), and the
// runs' list, record and logs; a Node.js tool deployed from a bucket.
import { expect } from 'chai';
import { config, entriesOf, makeArchive, uploadToNewBucket, waitForDeployment } from '../fixtures/projects';
import { structureWithBuild, structureWithoutBuild } from '../harness/builds';
import { as } from '../harness/client';
import { newTenant } from '../harness/stack';

const RAISING_TOOL = `
class Calculator:
    name = "Calculator"

    def divide(self, params):
        """Divides a by b."""
        print("dividing", params)
        return params["a"] / params["b"]

    def _hidden(self):
        pass


def init_tool():
    return Calculator()
`;

// What griptape's BaseTool does on creation (attrs and inspect find the class's module in sys.modules).
const INSPECTED_TOOL = `
import inspect, os


class Files:
    name = "Files"

    def __init__(self):
        self.defined_in = os.path.basename(inspect.getfile(type(self)))

    def where(self, params):
        """Names the file that defines this tool."""
        return self.defined_in + " " + type(self).__module__


def init_tool():
    return Files()
`;

// A Node.js tool as users write one: a class (CommonJS here) whose methods are activities, described by
// properties; an async activity; one that throws; the init function is async and named by the config.
const WORDS_TOOL_JS = `
class Words {
  constructor() { this.name = 'NodeWords'; }
  reverse({ text }) { return text.split(' ').reverse().join(' '); }
  async count({ text }) { await new Promise((r) => setTimeout(r, 5)); return { type: 'JsonArtifact', value: { words: text.split(' ').length } }; }
  fail() { console.log('about to fail'); throw new RangeError('no such word'); }
  _hidden() {}
}
Words.prototype.reverse.description = 'Reverses the order of the words of a text.';
Words.prototype.reverse.schema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
exports.makeTool = async () => new Words();
`;

describe('tool runs', function () {
  this.timeout(120_000);

  it('serves the default tool: OpenAPI document, echo as a TextArtifact, 404 for unknown activities; runs are listed and read', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const tool = await api.post('/api/tools', { name: 'default' });
    expect(tool.status, tool.text).to.equal(201);
    const deployment = await waitForDeployment(t.key, tool.body.latest_deployment_id);
    expect(deployment.status, JSON.stringify(deployment.status_detail)).to.equal('SUCCEEDED');
    const id = tool.body.tool_id;

    const doc = await api.get(`/api/tools/${id}/openapi`);
    expect(doc.status, doc.text).to.equal(200);
    expect(doc.body.openapi).to.equal('3.1.0');
    expect(doc.body.info.title).to.equal('DefaultTool');
    expect(Object.keys(doc.body.paths)).to.deep.equal(['/activities/echo']);
    const echo = doc.body.paths['/activities/echo'].post;
    expect(echo.operationId).to.equal('echo');
    expect(echo.description).to.equal('Answers params["text"].');
    expect(echo.requestBody.content['application/json'].schema).to.deep.equal({ type: 'object' });

    const res = await api.post(`/api/tools/${id}/activities/echo`, { text: 'hi' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ type: 'TextArtifact', value: 'hi' });

    const unknown = await api.post(`/api/tools/${id}/activities/nope`, {});
    expect(unknown.status, unknown.text).to.equal(404);
    expect(unknown.body.type).to.equal('NotFoundError');

    const list = await api.get(`/api/tools/${id}/runs?status=SUCCEEDED`);
    expect(list.status, list.text).to.equal(200);
    expect(list.body.pagination).to.include({ total_count: 2 });
    const [newest, first] = list.body.tool_runs;
    expect(first).to.include({ tool_id: id, deployment_id: deployment.deployment_id, status: 'SUCCEEDED' });
    expect(first.input).to.deep.equal({ describe: true });
    expect(first.runtime_path).to.match(/\/tool\.py$/);
    expect(newest.input).to.deep.equal({ activity: 'echo', params: { text: 'hi' } });
    expect(newest.output).to.deep.equal({ type: 'TextArtifact', value: 'hi' });
    expect(Date.parse(newest.started_at)).to.be.at.most(Date.parse(newest.completed_at));
    const failed = await api.get(`/api/tools/${id}/runs?status=FAILED`);
    expect(failed.body.tool_runs).to.have.length(1);
    expect(failed.body.tool_runs[0].input).to.deep.equal({ activity: 'nope', params: {} });

    const one = await api.get(`/api/tool-runs/${newest.tool_run_id}`);
    expect(one.status, one.text).to.equal(200);
    expect(one.body).to.deep.equal(newest);
    expect((await api.get(`/api/tool-runs/${newest.tool_run_id}/logs`)).body.logs).to.be.an('array');
  });

  it('loads the tool file as a module registered in sys.modules, so classes that inspect their module work', async () => {
    const t = await newTenant();
    const built = await structureWithBuild(t.organizationId, {
      kind: 'tool',
      files: { 'files_tool.py': INSPECTED_TOOL },
      mainFile: 'files_tool.py',
    });
    const api = as(t.key);
    const doc = await api.get(`/api/tools/${built.structureId}/openapi`);
    expect(doc.status, doc.text).to.equal(200);
    expect(Object.keys(doc.body.paths)).to.deep.equal(['/activities/where']);
    const res = await api.post(`/api/tools/${built.structureId}/activities/where`, {});
    expect(res.body).to.deep.equal({ type: 'TextArtifact', value: 'files_tool.py files_tool' });
  });

  it('answers {error, tool_run_id} when an activity raises; the run is FAILED and its logs hold the traceback', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const built = await structureWithBuild(t.organizationId, {
      kind: 'tool',
      files: { 'tool.py': RAISING_TOOL },
      mainFile: 'tool.py',
    });
    const id = built.structureId;

    const doc = await api.get(`/api/tools/${id}/openapi`);
    expect(doc.status, doc.text).to.equal(200);
    expect(doc.body.info.title).to.equal('Calculator');
    expect(Object.keys(doc.body.paths)).to.deep.equal(['/activities/divide']);

    const ok = await api.post(`/api/tools/${id}/activities/divide`, { a: 1, b: 4 });
    expect(ok.body).to.deep.equal({ type: 'TextArtifact', value: '0.25' });

    const res = await api.post(`/api/tools/${id}/activities/divide`, { a: 1, b: 0 });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.have.keys('error', 'tool_run_id');
    expect(res.body.error).to.include('ZeroDivisionError');
    const run = await api.get(`/api/tool-runs/${res.body.tool_run_id}`);
    expect(run.body).to.include({ tool_id: id, status: 'FAILED' });
    expect(run.body.status_detail.message).to.match(/^ZeroDivisionError: /);
    const logs = (await api.get(`/api/tool-runs/${res.body.tool_run_id}/logs`)).body.logs.join('\n');
    expect(logs).to.include('dividing').and.to.include('Traceback');

    // A tool run is not a function run, and a tool without a deployment cannot run.
    expect((await api.get(`/api/function-runs/${res.body.tool_run_id}`)).status).to.equal(404);
    const undeployed = await structureWithoutBuild(t.organizationId, 'tool');
    expect((await api.post(`/api/tools/${undeployed}/activities/echo`, {})).status).to.equal(409);
  });

  it('runs a Node.js tool deployed from a bucket: its OpenAPI document, each activity, and a thrown error as {error, tool_run_id}', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const archive = makeArchive(
      'zip',
      entriesOf({
        'tool_config.yaml': config('nodejs', '  tool_file: words.js\n  init_tool_function: makeTool\n'),
        'package.json': JSON.stringify({ name: 'words', version: '1.0.0', private: true }),
        'words.js': WORDS_TOOL_JS,
      }),
    );
    const bucketId = await uploadToNewBucket(t.key, 'words.zip', archive);
    const tool = await api.post('/api/tools', {
      name: 'node words',
      code: { data_lake: { bucket_id: bucketId, asset_path: 'words.zip' } },
    });
    expect(tool.status, tool.text).to.equal(201);
    const deployment = await waitForDeployment(t.key, tool.body.latest_deployment_id);
    expect(deployment.status, JSON.stringify(deployment.status_detail)).to.equal('SUCCEEDED');
    const id = tool.body.tool_id;

    const doc = await api.get(`/api/tools/${id}/openapi`);
    expect(doc.status, doc.text).to.equal(200);
    expect(doc.body.info.title).to.equal('NodeWords');
    expect(Object.keys(doc.body.paths)).to.deep.equal(['/activities/count', '/activities/fail', '/activities/reverse']);
    const reverse = doc.body.paths['/activities/reverse'].post;
    expect(reverse.description).to.equal('Reverses the order of the words of a text.');
    expect(reverse.requestBody.content['application/json'].schema.required).to.deep.equal(['text']);
    expect(doc.body.paths['/activities/count'].post.requestBody.content['application/json'].schema).to.deep.equal({
      type: 'object',
    });

    const reversed = await api.post(`/api/tools/${id}/activities/reverse`, { text: 'one two three' });
    expect(reversed.status, reversed.text).to.equal(200);
    expect(reversed.body).to.deep.equal({ type: 'TextArtifact', value: 'three two one' });
    const counted = await api.post(`/api/tools/${id}/activities/count`, { text: 'one two three' });
    expect(counted.body).to.deep.equal({ type: 'JsonArtifact', value: { words: 3 } });
    expect((await api.post(`/api/tools/${id}/activities/_hidden`, {})).status).to.equal(404);

    const failed = await api.post(`/api/tools/${id}/activities/fail`, {});
    expect(failed.status, failed.text).to.equal(200);
    expect(failed.body).to.have.keys('error', 'tool_run_id');
    expect(failed.body.error).to.include('no such word');
    const run = await api.get(`/api/tool-runs/${failed.body.tool_run_id}`);
    expect(run.body).to.include({ tool_id: id, status: 'FAILED' });
    expect(run.body.status_detail.message).to.match(/^RangeError: /);
    const logs = (await api.get(`/api/tool-runs/${failed.body.tool_run_id}/logs`)).body.logs.join('\n');
    expect(logs).to.include('about to fail').and.to.include('RangeError');
  });
});
