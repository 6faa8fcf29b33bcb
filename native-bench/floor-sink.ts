/**
 * The receiving end of the floor's loopback socket measurement, in its own
 * process (as a watch client would be): a TCP server on 127.0.0.1 that
 * counts and discards bytes. It reports its port over IPC and exits when its
 * parent disconnects.
 */
import { createServer } from 'node:net';

let bytes = 0;
const server = createServer((socket) => {
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  socket.on('error', () => {});
});
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.send?.({ port: typeof addr === 'object' && addr !== null ? addr.port : 0 });
});
process.on('disconnect', () => {
  server.close();
  process.exit(0);
});
process.on('message', (msg: { op?: string }) => {
  if (msg.op === 'bytes') process.send?.({ bytes });
});
