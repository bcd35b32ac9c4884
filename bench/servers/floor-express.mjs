// The framework floor: a bare express 5 app with the same body parsers, answering 200.
// With --born, served the way Streamgate serves its app (dist/http/server.js: requests and
// responses constructed with the app's prototypes): the like-for-like framework floor.
import express from 'express';
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const born = process.argv.includes('--born');
const app = express();
app.use(express.json());
app.use(express.urlencoded({ extended: false }));
app.all('/{*rest}', (req, res) => {
  res.json({ allowed: req.body !== null });
});
const server = born ? (await import('../../dist/http/server.js')).createHttpServer(app) : createServer(app);
server.listen(port, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', port, born })));
