// Runs one function invocation (nodejs runtime).
//
// usage: node function_runner.mjs <main_file> <handler_name> <input_json_file> <result_fd>
//
// Imports <main_file> (CommonJS or ES module, relative to the working directory), calls its export
// <handler_name>(event) with event = {body, query_params}, awaits it, and writes the JSON-encoded result to
// the pipe <result_fd>. Exit codes: 0 ok, 1 the handler threw, 2 the handler could not be loaded.
import fs from 'node:fs';
import { describeError, exported, fail, loadModule, writeResult } from './_tarmac_shim.mjs';

const [mainFile, handlerName, inputPath, resultArg] = process.argv.slice(2);
const resultFd = Number(resultArg);

let mod;
try {
  mod = await loadModule(mainFile);
} catch (err) {
  console.error(err);
  fail(resultFd, 2, 'LoadError', describeError(err));
}
const handler = exported(mod, handlerName);
if (typeof handler !== 'function')
  fail(resultFd, 2, 'LoadError', `${mainFile} exports no function named ${JSON.stringify(handlerName)}`);

const event = JSON.parse(fs.readFileSync(inputPath, 'utf8'));
try {
  const result = await handler(event);
  writeResult(resultFd, JSON.stringify(result === undefined ? null : result));
} catch (err) {
  console.error(err);
  fail(resultFd, 1, err?.name ?? 'Error', String(err?.message ?? err));
}
