/**
 * A real S3-compatible server for the tests: s3rver, run under node (test/helpers/s3rver-child.cjs)
 * on 127.0.0.1 with a temp directory. Node is required, not optional: CI has it, and the S3
 * tests fail with a message saying so rather than skip.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** s3rver's built-in account. */
export const S3RVER_KEY = 'S3RVER'

export type S3TestServer = Awaited<ReturnType<typeof startS3Server>>

/** Which `node` the tests run s3rver with; throws, naming the problem, when there is no real Node. */
export function nodeBinary(): string {
  const node = Bun.which('node')
  if (!node) throw new Error('the S3 blob store tests run s3rver under node, and no `node` is on PATH: install Node.js (CI has it)')
  // `bun run` can put a `node` that is bun itself on PATH; s3rver misbehaves under bun
  // (design.md, measured fact 6).
  const probe = Bun.spawnSync([node, '-e', 'process.stdout.write(typeof Bun)'])
  if (probe.stdout.toString() !== 'undefined') throw new Error(`\`${node}\` is not Node.js (it runs Bun); the S3 tests need a real node on PATH`)
  return node
}

/**
 * s3rver makes a truncated listing's continuation token with DES, which OpenSSL 3 (Node 17 and
 * later) has only in its legacy provider: without it, a listing that does not fit one page is a
 * 500. A Node that does not know the flag (before 17) has DES anyway.
 */
function legacyOpenSsl(node: string): string[] {
  const flag = '--openssl-legacy-provider'
  return Bun.spawnSync([node, flag, '-e', '0']).exitCode === 0 ? [flag] : []
}

/** Starts s3rver with `buckets` created; stop() ends it and removes its files. */
export async function startS3Server(buckets: string[] = ['trawl-test']) {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-s3rver-'))
  const node = nodeBinary()
  const child = Bun.spawn([node, ...legacyOpenSsl(node), join(import.meta.dir, 's3rver-child.cjs'), dir, ...buckets], {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const port = await readPort(child).catch(async (e: unknown) => {
    child.kill()
    const err = await new Response(child.stderr).text()
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`s3rver did not start: ${e instanceof Error ? e.message : e}\n${err}`)
  })
  const endpoint = `http://127.0.0.1:${port}`
  /** A client of our own, beside the store under test, to see what the server holds. */
  const client = (bucket = buckets[0]!) => new Bun.S3Client({ endpoint, bucket, accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY, region: 'us-east-1' })
  return {
    endpoint,
    port,
    dir,
    bucket: buckets[0]!,
    client,
    /** The settings of a store on `bucket` under `prefix`, as the environment of `trawl serve`. */
    env(prefix = '', bucket = buckets[0]!): Record<string, string> {
      return {
        TRAWL_BLOB_URL: `s3://${bucket}${prefix ? `/${prefix}` : ''}`,
        TRAWL_S3_ENDPOINT: endpoint,
        AWS_ACCESS_KEY_ID: S3RVER_KEY,
        AWS_SECRET_ACCESS_KEY: S3RVER_KEY,
        AWS_REGION: 'us-east-1',
      }
    },
    /** Every object key in the bucket under `prefix`, sorted, read from the server. */
    async keys(prefix = '', bucket = buckets[0]!): Promise<string[]> {
      const out: string[] = []
      let token: string | undefined
      do {
        const page = await client(bucket).list({ prefix, continuationToken: token, maxKeys: 1000 })
        out.push(...(page.contents ?? []).map((o) => o.key))
        token = page.isTruncated ? page.nextContinuationToken : undefined
      } while (token)
      return out.sort()
    },
    /** Every request the server has seen, as "METHOD /path?query". */
    async requests(): Promise<string[]> {
      return (await fetch(`${endpoint}/__requests`)).json() as Promise<string[]>
    },
    async stop() {
      child.stdin.end()
      const exited = await Promise.race([child.exited, Bun.sleep(5000).then(() => null)])
      if (exited === null) child.kill()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function readPort(child: Bun.Subprocess<'pipe', 'pipe', 'pipe'>): Promise<number> {
  const reader = child.stdout.getReader()
  let timer: Timer | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no port within 20 s')), 20_000)
  })
  let text = ''
  try {
    while (!text.includes('\n')) {
      const next = await Promise.race([reader.read(), deadline])
      if (next.done) throw new Error(`exited with ${await child.exited}`)
      text += new TextDecoder().decode(next.value)
    }
  } finally {
    clearTimeout(timer)
    reader.releaseLock()
  }
  return (JSON.parse(text.slice(0, text.indexOf('\n'))) as { port: number }).port
}
