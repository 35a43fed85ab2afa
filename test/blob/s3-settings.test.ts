import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DiskBlobStore, openBlobStore, S3BlobStore } from '../../src/blob'
import { s3ClientOptions } from '../../src/blob/s3-settings'
import { ConfigError, parseBlobUrl } from '../../src/config'

// Which blob store the settings choose, and the S3 client's options; no server needed.

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'trawl-s3settings-'))
  dirs.push(d)
  return d
}

describe('choosing and configuring the store', () => {
  const aws = { AWS_ACCESS_KEY_ID: 'AKIA1', AWS_SECRET_ACCESS_KEY: 'secret' }

  test('openBlobStore: disk for a bare data dir or no blob URL, S3 for s3://', async () => {
    const dir = tempDir()
    const disk = openBlobStore(dir)
    expect(disk).toBeInstanceOf(DiskBlobStore)
    await disk.close()
    const alsoDisk = openBlobStore({ dataDir: dir, blobUrl: null, s3Endpoint: null })
    expect(alsoDisk).toBeInstanceOf(DiskBlobStore)
    await alsoDisk.close()
    const s3 = openBlobStore({ dataDir: dir, blobUrl: 's3://bucket/x', s3Endpoint: 'http://127.0.0.1:1' }, { env: aws })
    expect(s3).toBeInstanceOf(S3BlobStore)
    expect((s3 as S3BlobStore).objectKey('t/1')).toBe('x/t/1')
    await s3.close()
  })

  test('missing credentials are a ConfigError naming the variable', () => {
    const dir = tempDir()
    const open = (env: Record<string, string>) => () => openBlobStore({ dataDir: dir, blobUrl: 's3://bucket', s3Endpoint: null }, { env })
    expect(open({})).toThrow(new ConfigError('AWS_ACCESS_KEY_ID: must be set when TRAWL_BLOB_URL is s3://…'))
    expect(open({ AWS_ACCESS_KEY_ID: 'k' })).toThrow(new ConfigError('AWS_SECRET_ACCESS_KEY: must be set when TRAWL_BLOB_URL is s3://…'))
    expect(open({ ...aws, AWS_REGION: 'EU West' })).toThrow(ConfigError)
  })

  test('the prefix is a folder: with or without slashes, keys go below it', () => {
    expect(parseBlobUrl('s3://bkt')).toEqual({ bucket: 'bkt', prefix: '' })
    expect(parseBlobUrl('s3://bkt/')).toEqual({ bucket: 'bkt', prefix: '' })
    expect(() => parseBlobUrl('s3://bkt/../other')).toThrow('TRAWL_BLOB_URL: the prefix must not contain . or .. segments, got "s3://bkt/../other"')
    expect(() => parseBlobUrl('s3://bkt/a/./c')).toThrow('segments')
    expect(parseBlobUrl('s3://bkt/crawls')).toEqual({ bucket: 'bkt', prefix: 'crawls/' })
    expect(parseBlobUrl('s3://bkt/crawls/eu/')).toEqual({ bucket: 'bkt', prefix: 'crawls/eu/' })
    expect(parseBlobUrl('s3://bkt//x//')).toEqual({ bucket: 'bkt', prefix: 'x/' })
  })

  test('the bucket is a name S3 takes: 3-63 lowercase letters, digits, dots and hyphens', () => {
    for (const bad of ['s3://b', 's3://', 's3://Bucket', 's3://-bkt', 's3://bkt-', 's3://b_k_t/x', `s3://${'b'.repeat(64)}`, 'gs://bkt']) {
      expect(() => parseBlobUrl(bad)).toThrow(`TRAWL_BLOB_URL: must be s3://bucket/prefix, got "${bad}"`)
    }
    expect(parseBlobUrl(`s3://${'b'.repeat(63)}/x`)).toEqual({ bucket: 'b'.repeat(63), prefix: 'x/' })
    expect(parseBlobUrl('s3://my.bucket-1')).toEqual({ bucket: 'my.bucket-1', prefix: '' })
  })

  test('client options: every value explicit; path-style on an endpoint, virtual-hosted on AWS unless the bucket has a dot', () => {
    const loc = { bucket: 'my-bucket', prefix: '' }
    expect(s3ClientOptions(loc, 'http://127.0.0.1:9000', { ...aws, AWS_SESSION_TOKEN: 'tok', AWS_REGION: 'eu-west-1' })).toEqual({
      accessKeyId: 'AKIA1',
      secretAccessKey: 'secret',
      sessionToken: 'tok',
      region: 'eu-west-1',
      bucket: 'my-bucket',
      endpoint: 'http://127.0.0.1:9000',
      virtualHostedStyle: false,
    })
    expect(s3ClientOptions(loc, null, { ...aws, AWS_DEFAULT_REGION: 'ap-south-1' })).toMatchObject({
      region: 'ap-south-1',
      sessionToken: '',
      endpoint: 'https://my-bucket.s3.ap-south-1.amazonaws.com',
      virtualHostedStyle: true,
    })
    // AWS_REGION wins over AWS_DEFAULT_REGION; us-east-1 without either
    expect(s3ClientOptions(loc, null, { ...aws, AWS_REGION: 'eu-north-1', AWS_DEFAULT_REGION: 'ap-south-1' }).region).toBe('eu-north-1')
    expect(s3ClientOptions(loc, null, aws).region).toBe('us-east-1')
    expect(s3ClientOptions({ bucket: 'my.bucket', prefix: '' }, null, aws)).toMatchObject({
      endpoint: 'https://s3.us-east-1.amazonaws.com',
      virtualHostedStyle: false,
    })
    // what Bun makes of them: the URL a request goes to
    const hosted = new Bun.S3Client(s3ClientOptions(loc, null, aws)).presign('t/a')
    expect(hosted.startsWith('https://my-bucket.s3.us-east-1.amazonaws.com/t/a?')).toBe(true)
    const pathStyle = new Bun.S3Client(s3ClientOptions(loc, 'http://127.0.0.1:9000', aws)).presign('t/a')
    expect(pathStyle.startsWith('http://127.0.0.1:9000/my-bucket/t/a?')).toBe(true)
  })
})
