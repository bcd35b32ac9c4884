// A stand-in for a media server's WebSocket signalling endpoint, written against RFC 6455 by hand (no
// WebSocket package): it completes the opening handshake, records the request URL of every
// connection, decodes the client's text messages and answers the Web SDK's transaction protocol
// ({type:"cmd", transId, name, data} -> {type:"response"|"error", transId, data}).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';

const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export interface Command {
  type: 'cmd';
  transId: number;
  name: string;
  data: Record<string, unknown>;
}

export interface StandInConnection {
  /** The request target as the client sent it: path and query. */
  url: string;
  origin: string | undefined;
  /** Every text message received, parsed as JSON (or the raw text when it is not JSON). */
  messages: unknown[];
  closed: boolean;
}

/** What to answer a command with: data for a response, or an error. */
export type CommandHandler = (cmd: Command, conn: StandInConnection) => Promise<{ data: unknown } | { error: unknown }>;

export interface WsStandIn {
  port: number;
  connections: StandInConnection[];
  onCommand: CommandHandler;
  close(): Promise<void>;
}

function frame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x80 | opcode, len]) : len < 65536 ? Buffer.from([0x80 | opcode, 126, len >> 8, len & 0xff]) : Buffer.concat([Buffer.from([0x80 | opcode, 127]), bigLength(len)]);
  return Buffer.concat([head, payload]);
}

function bigLength(len: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(len));
  return b;
}

/** Splits complete frames off `buf` (client frames are always masked). */
function readFrames(buf: Buffer): { frames: Array<{ fin: boolean; opcode: number; payload: Buffer }>; rest: Buffer } {
  const frames: Array<{ fin: boolean; opcode: number; payload: Buffer }> = [];
  let at = 0;
  for (;;) {
    if (buf.length - at < 2) break;
    const b0 = buf[at];
    const b1 = buf[at + 1];
    let len = b1 & 0x7f;
    let off = at + 2;
    if (len === 126) {
      if (buf.length - off < 2) break;
      len = buf.readUInt16BE(off);
      off += 2;
    } else if (len === 127) {
      if (buf.length - off < 8) break;
      len = Number(buf.readBigUInt64BE(off));
      off += 8;
    }
    const masked = (b1 & 0x80) !== 0;
    const maskLen = masked ? 4 : 0;
    if (buf.length - off < maskLen + len) break;
    const mask = masked ? buf.subarray(off, off + 4) : undefined;
    const payload = Buffer.from(buf.subarray(off + maskLen, off + maskLen + len));
    if (mask) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
    frames.push({ fin: (b0 & 0x80) !== 0, opcode: b0 & 0x0f, payload });
    at = off + maskLen + len;
  }
  return { frames, rest: buf.subarray(at) };
}

export async function startWsStandIn(): Promise<WsStandIn> {
  const sockets = new Set<Duplex>();
  const standIn: WsStandIn = {
    port: 0,
    connections: [],
    onCommand: async () => ({ error: 'no handler' }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server: Server = createServer((_req, res) => {
    res.statusCode = 426;
    res.end('WebSocket only');
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const key = req.headers['sec-websocket-key'];
    if (typeof key !== 'string' || req.headers.upgrade?.toLowerCase() !== 'websocket') {
      socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      return;
    }
    const accept = createHash('sha1').update(key + HANDSHAKE_GUID).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`);
    const conn: StandInConnection = { url: req.url ?? '', origin: req.headers.origin, messages: [], closed: false };
    standIn.connections.push(conn);
    const send = (o: unknown) => {
      if (!socket.destroyed) socket.write(frame(0x1, Buffer.from(JSON.stringify(o))));
    };
    let pending: Buffer = Buffer.alloc(0);
    let fragments: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => {
      const { frames, rest } = readFrames(Buffer.concat([pending, chunk]));
      pending = rest;
      for (const f of frames) {
        if (f.opcode === 0x8) {
          conn.closed = true;
          if (!socket.destroyed) socket.end(frame(0x8, f.payload.subarray(0, 2)));
          return;
        }
        if (f.opcode === 0x9) {
          socket.write(frame(0xa, f.payload));
          continue;
        }
        if (f.opcode !== 0x1 && f.opcode !== 0x0) continue;
        fragments.push(f.payload);
        if (!f.fin) continue;
        const text = Buffer.concat(fragments).toString('utf8');
        fragments = [];
        let msg: unknown = text;
        try {
          msg = JSON.parse(text);
        } catch {
          // kept as text
        }
        conn.messages.push(msg);
        const cmd = msg as Partial<Command>;
        if (cmd && cmd.type === 'cmd' && typeof cmd.transId === 'number' && typeof cmd.name === 'string') {
          standIn
            .onCommand(cmd as Command, conn)
            .then((out) => send('data' in out ? { type: 'response', transId: cmd.transId, data: out.data } : { type: 'error', transId: cmd.transId, data: out.error }))
            .catch((e: Error) => send({ type: 'error', transId: cmd.transId, data: String(e?.message ?? e) }));
        }
      }
    });
    socket.on('end', () => {
      conn.closed = true;
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  standIn.port = (server.address() as AddressInfo).port;
  return standIn;
}
