import { createServer, type Server, type Socket } from 'node:net'

/** A TCP listener on loopback that counts the connections it accepts and keeps what each sent. */
export type TcpListener = {
  port: number
  /** Connections accepted since start (tests reset it). */
  accepted: number
  /** What each accepted connection sent, in order of acceptance. */
  received: string[]
  close(): Promise<void>
}

/**
 * Listens on `host` (a free port); `answer` sees each connection's bytes so far on every chunk.
 * What the kernel accepted is what is counted: a connection the peer opened, whatever it sent.
 */
export async function tcpListener(host = '127.0.0.1', answer?: (data: string, socket: Socket) => void): Promise<TcpListener> {
  const sockets = new Set<Socket>()
  const l = { port: 0, accepted: 0, received: [] as string[] } as TcpListener
  const server: Server = createServer((socket) => {
    l.accepted++
    sockets.add(socket)
    const index = l.received.push('') - 1
    socket.on('error', () => {})
    socket.on('data', (d) => {
      l.received[index] += d.toString('latin1')
      answer?.(l.received[index]!, socket)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  l.port = (server.address() as { port: number }).port
  l.close = () => {
    for (const s of sockets) s.destroy()
    return new Promise((resolve) => server.close(() => resolve()))
  }
  return l
}
