import type { S3Options } from 'bun'
import { ConfigError, type S3Location } from '../config'

/**
 * The Bun.S3Client options for a location. Every option is given, read from `env` here, which
 * is read for AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION and
 * AWS_DEFAULT_REGION and nothing else:
 * Bun.S3Client falls back to S3_* and AWS_* variables of its own (read once, at process start)
 * for any option left out, so leaving one out would make what trawl reads depend on Bun's list.
 *
 * Addressing: with `endpoint` (MinIO, R2, s3rver) requests are path-style, `endpoint/bucket/key`,
 * which every S3-compatible server answers; on AWS they are virtual-hosted,
 * `https://bucket.s3.region.amazonaws.com/key`, AWS's preferred form, except for a bucket with a
 * dot in its name, which AWS's TLS certificate does not cover that way.
 */
export function s3ClientOptions(location: S3Location, endpoint: string | null, env: Record<string, string | undefined>): S3Options {
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim()
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim()
  if (!accessKeyId) throw new ConfigError('AWS_ACCESS_KEY_ID: must be set when TRAWL_BLOB_URL is s3://…')
  if (!secretAccessKey) throw new ConfigError('AWS_SECRET_ACCESS_KEY: must be set when TRAWL_BLOB_URL is s3://…')
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || 'us-east-1'
  if (!/^[a-z0-9-]+$/.test(region)) throw new ConfigError(`${env.AWS_REGION?.trim() ? 'AWS_REGION' : 'AWS_DEFAULT_REGION'}: must be a region name like eu-west-1, got "${region}"`)
  const common = { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN?.trim() ?? '', region, bucket: location.bucket }
  if (endpoint) return { ...common, endpoint, virtualHostedStyle: false }
  if (location.bucket.includes('.')) return { ...common, endpoint: `https://s3.${region}.amazonaws.com`, virtualHostedStyle: false }
  return { ...common, endpoint: `https://${location.bucket}.s3.${region}.amazonaws.com`, virtualHostedStyle: true }
}
