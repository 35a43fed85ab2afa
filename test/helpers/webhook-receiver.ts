import { Webhook } from 'standardwebhooks'

export type Received = { id: string; type: string; data: Record<string, unknown>; timestamp: string; body: string }

/**
 * A webhook receiver on 127.0.0.1 that verifies every request with the Standard Webhooks
 * library (a request that fails is kept in `rejected`, and answered 400), and can go down
 * (connection refused) and come back on the same port.
 */
export function webhookReceiver() {
  const secrets: string[] = []
  const received: Received[] = []
  const rejected: string[] = []
  let server: ReturnType<typeof Bun.serve> | null = null
  let port = 0

  const listen = () => {
    server = Bun.serve({
      hostname: '127.0.0.1',
      port,
      async fetch(request) {
        const body = await request.text()
        const headers = Object.fromEntries(request.headers)
        const verified = secrets.some((secret) => {
          try {
            new Webhook(secret).verify(body, headers)
            return true
          } catch {
            return false
          }
        })
        if (!verified || headers['content-type'] !== 'application/json') {
          rejected.push(`${headers['webhook-id']}: ${body}`)
          return new Response('bad signature', { status: 400 })
        }
        const payload = JSON.parse(body)
        received.push({ id: headers['webhook-id']!, type: payload.type, data: payload.data, timestamp: payload.timestamp, body })
        return new Response(null, { status: 204 })
      },
    })
    port = server.port!
  }
  listen()

  return {
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    /** Accepts requests signed with this secret from now on. */
    trust: (secret: string) => void secrets.push(secret),
    received,
    rejected,
    /** What arrived about one run. */
    ofRun: (runId: string) => received.filter((r) => r.data.run_id === runId),
    down: () => {
      server?.stop(true)
      server = null
    },
    up: () => {
      if (!server) listen()
    },
    stop: () => server?.stop(true),
  }
}
export type WebhookReceiver = ReturnType<typeof webhookReceiver>
