// The framework floor: a bare express 5 app with the same body parsers, answering 200.
import express from 'express';

const port = Number(process.argv[2]);
const app = express();
app.use(express.json());
app.use(express.urlencoded({ extended: false }));
app.all('/{*rest}', (req, res) => {
  res.json({ allowed: req.body !== null });
});
app.listen(port, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', port })));
