// Runs one function invocation (nodejs runtime).
//
// usage: node function_runner.mjs <main_file> <handler_name> <input_json_file> <result_fd>
//
// Imports <main_file> (CommonJS or ES module, relative to the working directory), calls its export
// <handler_name>(event) with event = {body, query_params}, awaits it, and writes the JSON-encoded result to
// the pipe <result_fd> (past the platform's result limit the pipe is closed on the other side: EPIPE). Exit codes: 0 ok, 1 the handler threw, 2 the handler could not be loaded.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [mainFile, handlerName, inputPath, resultArg] = process.argv.slice(2);
const resultFd = Number(resultArg);

function writeResult(text) {
  const bytes = Buffer.from(text);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let written = 0; written < bytes.length;) {
    try {
      written += fs.writeSync(resultFd, bytes, written);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
      Atomics.wait(pause, 0, 0, 5); // the platform reads as it arrives
    }
  }
  fs.closeSync(resultFd);
}

function fail(code, type, message) {
  writeResult(JSON.stringify({ error: { type, message } }));
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
  writeResult(JSON.stringify(result === undefined ? null : result));
} catch (err) {
  console.error(err);
  fail(1, err?.name ?? 'Error', String(err?.message ?? err));
}
