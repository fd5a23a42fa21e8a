// Runs one function invocation (nodejs runtime).
//
// usage: node function_runner.mjs <main_file> <handler_name> <input_json_file> <result_json_file>
//
// Imports <main_file> (CommonJS or ES module, relative to the working directory), calls its export
// <handler_name>(event) with event = {body, query_params}, awaits it, and writes the JSON-encoded result to
// <result_json_file>. Exit codes: 0 ok, 1 the handler threw, 2 the handler could not be loaded.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [mainFile, handlerName, inputPath, resultPath] = process.argv.slice(2);

function fail(code, type, message) {
  fs.writeFileSync(resultPath, JSON.stringify({ error: { type, message } }));
  process.exit(code);
}

let mod;
try {
  mod = await import(pathToFileURL(path.resolve(mainFile)).href);
} catch (err) {
  console.error(err);
  fail(2, 'LoadError', `${err?.name ?? 'Error'}: ${err?.message ?? err}`);
}
const handler = mod[handlerName] ?? mod.default?.[handlerName] ?? (handlerName === 'default' ? mod.default : undefined);
if (typeof handler !== 'function')
  fail(2, 'LoadError', `${mainFile} exports no function named ${JSON.stringify(handlerName)}`);

const event = JSON.parse(fs.readFileSync(inputPath, 'utf8'));
try {
  const result = await handler(event);
  fs.writeFileSync(resultPath, JSON.stringify(result === undefined ? null : result));
} catch (err) {
  console.error(err);
  fail(1, err?.name ?? 'Error', String(err?.message ?? err));
}
