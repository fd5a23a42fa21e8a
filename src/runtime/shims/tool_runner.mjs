// Runs one tool invocation (nodejs runtime), the counterpart of tool_runner.py.
//
// usage: node tool_runner.mjs <init_tool_file> <init_tool_function> <result_fd> describe
//        node tool_runner.mjs <init_tool_file> <init_tool_function> <result_fd> run <activity> <params_json_file>
//
// Imports <init_tool_file> (CommonJS or ES module) and calls (and awaits) its export <init_tool_function>()
// for the tool: an object whose methods (own or inherited, not `constructor`, not starting with `_`) are its
// activities. A method's `description` and `schema` properties describe it (default "" and {"type": "object"});
// the tool's `name` property names it (default: its class's name).
// describe writes {"name", "activities": [{"name", "description", "schema"}]}; run calls the activity with the
// params, awaits it and writes the result as an artifact: an object as it is, anything else a TextArtifact of
// String(x). Exit codes: 0 ok, 1 the activity threw, 2 the tool could not be loaded or has no such activity.
import fs from 'node:fs';
import { describeError, exported, fail, loadModule, writeResult } from './_tarmac_shim.mjs';

const [initFile, initFunction, resultArg, mode, activity, paramsPath] = process.argv.slice(2);
const resultFd = Number(resultArg);

function activitiesOf(tool) {
  const names = new Set();
  for (let o = tool; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (name === 'constructor' || name.startsWith('_')) continue;
      const descriptor = Object.getOwnPropertyDescriptor(o, name);
      if (typeof descriptor?.value === 'function') names.add(name);
    }
  }
  return [...names].sort().map((name) => {
    const method = tool[name];
    return {
      name,
      description: typeof method.description === 'string' ? method.description : '',
      schema: method.schema && typeof method.schema === 'object' ? method.schema : { type: 'object' },
    };
  });
}

const toArtifact = (x) =>
  x !== null && typeof x === 'object' && !Array.isArray(x) ? x : { type: 'TextArtifact', value: String(x) };

let tool;
try {
  const init = exported(await loadModule(initFile), initFunction);
  if (typeof init !== 'function')
    fail(resultFd, 2, 'LoadError', `${initFile} exports no function named ${JSON.stringify(initFunction)}`);
  tool = await init();
  if (tool === null || typeof tool !== 'object') throw new TypeError(`${initFunction}() did not answer an object`);
} catch (err) {
  console.error(err);
  fail(resultFd, 2, 'LoadError', describeError(err));
}
const activities = activitiesOf(tool);
if (mode === 'describe') {
  const className = tool.constructor && tool.constructor !== Object ? tool.constructor.name : '';
  const name = typeof tool.name === 'string' && tool.name ? tool.name : className || 'Tool';
  writeResult(resultFd, JSON.stringify({ name, activities }));
  process.exit(0);
}
if (!activities.some((a) => a.name === activity))
  fail(resultFd, 2, 'UnknownActivity', `The tool has no activity named ${JSON.stringify(activity)}`);
const params = JSON.parse(fs.readFileSync(paramsPath, 'utf8'));
try {
  writeResult(resultFd, JSON.stringify(toArtifact(await tool[activity](params))));
} catch (err) {
  console.error(err);
  fail(resultFd, 1, err?.name ?? 'Error', String(err?.message ?? err));
}
