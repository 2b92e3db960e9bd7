'use strict'
// Drives a GTP engine through @sabaki/gtp's Controller, the GTP client of the Sabaki GUI,
// for tests/protocol/test_sabaki_gtp.py.
//
// stdin: a JSON object
//   modules     directory that holds node_modules/@sabaki/gtp (the `node_modules` folder)
//   engine      [path, ...args] of the engine process
//   cwd         working directory of the engine (optional)
//   commands    [{id?, name, args?}, ...], sent one after the other
//   timeout_ms  longest wait for one response and for the process to end after `quit`
// stdout: a JSON object
//   responses   [{command, response: {id, content, error}}, ...] in order
//   stderr      the engine's stderr lines
//   exit        {code, signal} of the engine process, or null if it did not end
//   error       a message when something went wrong (no response, engine gone)

const fs = require('fs')

const spec = JSON.parse(fs.readFileSync(0, 'utf8'))
const {Controller} = require(require.resolve('@sabaki/gtp', {paths: [spec.modules]}))

function withTimeout(promise, ms, what) {
  let timer
  const expired = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)
  })
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}

async function main() {
  const [path, ...args] = spec.engine
  const controller = new Controller(path, args, {cwd: spec.cwd || process.cwd()})
  const result = {responses: [], stderr: [], exit: null, error: null}
  controller.on('stderr', ({content}) => result.stderr.push(content))
  controller.start()
  const ended = new Promise(resolve => {
    controller.process.once('exit', (code, signal) => {
      result.exit = {code, signal}
      resolve()
    })
  })

  try {
    for (const command of spec.commands) {
      const response = await withTimeout(controller.sendCommand(command), spec.timeout_ms,
                                         `response to ${command.name}`)
      result.responses.push({command, response})
      if (command.name === 'quit') break
    }
    await withTimeout(ended, spec.timeout_ms, 'end of the engine after quit')
  } catch (error) {
    result.error = String(error && error.message ? error.message : error)
    if (controller.process != null) await controller.kill()
  }
  process.stdout.write(JSON.stringify(result) + '\n')
}

main().catch(error => {
  process.stdout.write(JSON.stringify({error: String(error)}) + '\n')
  process.exitCode = 1
})
