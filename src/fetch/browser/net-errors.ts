import { FetchError } from '../errors'

/** Maps a Chrome net error (`net::ERR_…`) of the main document to the fetch error codes of design.md §6. */
export function netError(errorText: string, url: string): FetchError {
  const code = errorText.replace(/^net::/, '')
  const say = (what: string) => `${what} (${code}) fetching ${url}`
  if (code === 'ERR_NAME_NOT_RESOLVED') return new FetchError('dns', say('the host could not be resolved'))
  if (code === 'ERR_NAME_RESOLUTION_FAILED') return new FetchError('dns', say('name resolution failed'), true)
  if (code.startsWith('ERR_CERT_') || code.startsWith('ERR_SSL_') || code === 'ERR_BAD_SSL_CLIENT_AUTH_CERT') return new FetchError('tls', say('the TLS handshake failed'))
  if (code.startsWith('ERR_PROXY_') || code.startsWith('ERR_TUNNEL_') || code === 'ERR_MANDATORY_PROXY_CONFIGURATION_FAILED') return new FetchError('proxy', say('the proxy failed'), true)
  if (code === 'ERR_TIMED_OUT' || code === 'ERR_CONNECTION_TIMED_OUT') return new FetchError('timeout', say('the connection timed out'), true)
  if (code === 'ERR_TOO_MANY_REDIRECTS') return new FetchError('redirect_limit', say('too many redirects'))
  if (/^ERR_CONNECTION_|^ERR_ADDRESS_/.test(code) || ['ERR_EMPTY_RESPONSE', 'ERR_NETWORK_CHANGED', 'ERR_INTERNET_DISCONNECTED', 'ERR_NETWORK_IO_SUSPENDED', 'ERR_SOCKET_NOT_CONNECTED'].includes(code))
    return new FetchError('connect', say('the connection failed'), true)
  return new FetchError('connect', say('the page failed to load'))
}
