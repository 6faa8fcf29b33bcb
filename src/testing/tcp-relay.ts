/**
 * TcpRelay: a loopback TCP relay in front of one server, for network faults
 * in tests and benchmarks (a proxy's upstream link). `cut()` resets every
 * relayed connection and refuses new ones (accepted, then reset at once)
 * until `restore()`: what a client sees when a network path breaks; `blackhole()`
 * keeps the connections open but drops their bytes (a path that hangs). It counts
 * the watch events relayed downstream (a benchmark's deliveries through it).
 */
import net from 'node:net';

const EVENT_START = Buffer.from('\n{"type":"'); // the chunk header or the previous event ends with \n

export class TcpRelay {
  private readonly targetPort: number;
  private readonly targetHost: string;
  private readonly server: net.Server;
  private isCut = false;
  /** Each relayed socket and the one it pipes to. */
  private readonly peers = new Map<net.Socket, net.Socket>();
  /** Connections accepted and relayed since the start. */
  accepted = 0;
  /** JSON watch events (a line starting `{"type":"`) relayed from the server to its clients (one split across two reads is missed). */
  eventsDown = 0;

  constructor(targetPort: number, targetHost = '127.0.0.1') {
    this.targetPort = targetPort;
    this.targetHost = targetHost;
    this.server = net.createServer((client) => this.relay(client));
  }

  /** Listen on 127.0.0.1 (port 0: any free port); resolves with the port. */
  listen(port = 0): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve((this.server.address() as net.AddressInfo).port));
    });
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Reset every relayed connection; refuse new ones until restore(). */
  cut(): void {
    this.isCut = true;
    for (const s of this.peers.keys()) s.resetAndDestroy();
    this.peers.clear();
  }

  /**
   * A hung path: the relayed connections stay open but every byte in either direction is dropped
   * from now on (for good: their streams are broken). New connections relay normally.
   */
  blackhole(): void {
    for (const [from, to] of this.peers) {
      from.unpipe(to);
      from.resume(); // keep reading, into nothing
    }
  }

  restore(): void {
    this.isCut = false;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: net.Socket): void {
    if (this.isCut) {
      client.resetAndDestroy();
      return;
    }
    this.accepted++;
    const upstream = net.connect(this.targetPort, this.targetHost);
    const drop = (): void => {
      this.peers.delete(client);
      this.peers.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    this.peers.set(client, upstream);
    this.peers.set(upstream, client);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      for (let i = chunk.indexOf(EVENT_START); i >= 0; i = chunk.indexOf(EVENT_START, i + EVENT_START.length))
        this.eventsDown++;
    });
    upstream.pipe(client);
  }
}
