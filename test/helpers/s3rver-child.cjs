// Runs s3rver for the tests, under node (under bun its listings come back unsorted and it
// ignores If-None-Match). Arguments: data directory, then the buckets to create.
// Prints {"port": N} once listening on 127.0.0.1; stops when its stdin closes, so it cannot
// outlive the test process that started it. GET /__requests answers every request seen so
// far as "METHOD /path?query", for tests that check which S3 calls were made.
const http = require('node:http')
const S3rver = require('s3rver')
const FilesystemStore = require('s3rver/lib/stores/filesystem')

// s3rver keeps an object as a file named after its key, so a key segment longer than a file
// name may be (255 bytes) crashes it, where S3 takes keys of up to 1024 bytes. Long segments
// are cut into directories joined by "~/" (blob keys never hold "~") and joined again on reading.
const SEGMENT = 200
const encodeKeyPath = FilesystemStore.encodeKeyPath
const decodeKeyPath = FilesystemStore.decodeKeyPath
FilesystemStore.encodeKeyPath = (key) =>
  encodeKeyPath(key)
    .split('/')
    .map((s) => (s.length <= SEGMENT ? s : s.match(new RegExp(`.{1,${SEGMENT}}`, 'g')).join('~/')))
    .join('/')
FilesystemStore.decodeKeyPath = (keyPath) => decodeKeyPath(keyPath.split('~/').join(''))

// After a delete s3rver removes the directories left empty; two deletes in one directory at
// once race there (readdir or rmdir of a directory the other just removed) and answer 500.
// S3 has no directories, so losing that race is not an error.
const deleteObject = FilesystemStore.prototype.deleteObject
FilesystemStore.prototype.deleteObject = async function (...args) {
  try {
    await deleteObject.apply(this, args)
  } catch (err) {
    if (err.code !== 'ENOENT' && err.code !== 'ENOTEMPTY') throw err
  }
}

const [directory, ...buckets] = process.argv.slice(2)
const s3rver = new S3rver({ silent: true, directory, configureBuckets: buckets.map((name) => ({ name })) })
const seen = []
const handle = s3rver.callback()
const server = http.createServer((req, res) => {
  if (req.url === '/__requests') return res.end(JSON.stringify(seen))
  seen.push(`${req.method} ${req.url}`)
  handle(req, res)
})

s3rver
  .configureBuckets()
  .then(() => new Promise((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve)))
  .then(
    () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n'),
    (err) => {
      process.stderr.write(`s3rver did not start: ${err && err.stack}\n`)
      process.exit(1)
    },
  )
// One failing request must not take the server (and every later test) down with it.
process.on('uncaughtException', (err) => process.stderr.write(`s3rver: ${err && err.stack}\n`))
process.stdin.on('end', () => server.close(() => process.exit(0)))
process.stdin.resume()
