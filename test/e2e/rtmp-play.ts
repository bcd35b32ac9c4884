// A minimal RTMP player for the end-to-end tests: the plain handshake, then connect, createStream
// and play in AMF0, as ffmpeg sends them, on one TCP connection. nginx-rtmp treats it as any player
// (its on_play asks Streamgate; on_play_done follows the close); it is a few hundred times cheaper
// than starting ffmpeg, so a test can make a thousand plays in seconds.
import { connect } from 'node:net';

const HANDSHAKE = 1536;
const CHUNK_SIZE = 4096;

function amfString(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  const h = Buffer.alloc(3);
  h.writeUInt8(0x02, 0);
  h.writeUInt16BE(b.length, 1);
  return Buffer.concat([h, b]);
}

function amfNumber(n: number): Buffer {
  const b = Buffer.alloc(9);
  b.writeUInt8(0x00, 0);
  b.writeDoubleBE(n, 1);
  return b;
}

const AMF_NULL = Buffer.from([0x05]);

function amfObject(o: Record<string, string | number>): Buffer {
  const parts: Buffer[] = [Buffer.from([0x03])];
  for (const [k, v] of Object.entries(o)) {
    const key = Buffer.from(k, 'utf8');
    const len = Buffer.alloc(2);
    len.writeUInt16BE(key.length, 0);
    parts.push(len, key, typeof v === 'number' ? amfNumber(v) : amfString(v));
  }
  parts.push(Buffer.from([0x00, 0x00, 0x09]));
  return Buffer.concat(parts);
}

/** One message in one chunk (type-0 header; every payload here is under the chunk size). */
function message(csid: number, type: number, streamId: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(12);
  h.writeUInt8(csid, 0); // fmt 0
  h.writeUIntBE(0, 1, 3); // timestamp
  h.writeUIntBE(payload.length, 4, 3);
  h.writeUInt8(type, 7);
  h.writeUInt32LE(streamId, 8);
  return Buffer.concat([h, payload]);
}

export type PlayOutcome = 'playing' | 'refused';

/**
 * Plays `name` of application `app` and closes once the server says NetStream.Play.Start
 * ('playing'), or resolves 'refused' when the server closes the connection first (nginx-rtmp drops
 * a player whose on_play was refused). Rejects on a socket error or after `timeoutMs`.
 */
export function rtmpPlay(port: number, app: string, name: string, timeoutMs = 10_000): Promise<PlayOutcome> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let handshaken = false;
    let settled = false;
    const finish = (err: Error | null, outcome?: PlayOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(outcome as PlayOutcome);
    };
    const timer = setTimeout(() => finish(new Error(`rtmp play of ${app}/${name}: no answer in ${timeoutMs} ms`)), timeoutMs);
    socket.once('connect', () => {
      // C0 (version 3) and C1 (time, zeros, random bytes): a zero version field asks for the plain handshake
      socket.write(Buffer.concat([Buffer.from([0x03]), Buffer.alloc(HANDSHAKE)]));
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (!handshaken) {
        if (received.length < 1 + 2 * HANDSHAKE) return;
        handshaken = true;
        const s1 = received.subarray(1, 1 + HANDSHAKE);
        received = received.subarray(1 + 2 * HANDSHAKE);
        const setChunkSize = Buffer.alloc(4);
        setChunkSize.writeUInt32BE(CHUNK_SIZE, 0);
        const tcUrl = `rtmp://127.0.0.1:${port}/${app}`;
        socket.write(
          Buffer.concat([
            Buffer.from(s1), // C2 echoes S1
            message(2, 1, 0, setChunkSize),
            message(3, 20, 0, Buffer.concat([amfString('connect'), amfNumber(1), amfObject({ app, flashVer: 'LNX 9,0,124,2', tcUrl, fpad: 0, capabilities: 15, audioCodecs: 4071, videoCodecs: 252, videoFunction: 1 })])),
            message(3, 20, 0, Buffer.concat([amfString('createStream'), amfNumber(2), AMF_NULL])),
            // nginx-rtmp answers createStream with stream id 1, always
            message(8, 20, 1, Buffer.concat([amfString('play'), amfNumber(0), AMF_NULL, amfString(name), amfNumber(-2000)])),
          ]),
        );
      }
      if (received.includes('NetStream.Play.Start')) finish(null, 'playing');
    });
    socket.once('close', () => finish(null, 'refused'));
    socket.once('error', (e) => finish(e));
  });
}
