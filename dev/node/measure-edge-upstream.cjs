// The upstream of npm run measure:edge's race and error experiments, run in the lab image's Node.js
// (`node -e`): it misbehaves on purpose, per path, and records what reached it, per connection.
//   /close-reused  answers a connection's first request; on a later one it closes the connection without
//                  a byte of answer: the app closing a kept-alive connection while the edge sends on it.
//   /hang          never answers.
//   /log           what reached it: [{ id (X-Termlab-Request), conn, seq, method, path, action }].
const http = require('node:http');

let connections = 0;
const seen = [];
const server = http.createServer({ keepAliveTimeout: 600_000 }, (req, res) => {
  const socket = req.socket;
  socket.termlabSeq = (socket.termlabSeq ?? 0) + 1;
  const path = new URL(req.url ?? '/', 'http://upstream.invalid').pathname;
  const record = {
    id: req.headers['x-termlab-request'] ?? null,
    conn: socket.termlabConn,
    seq: socket.termlabSeq,
    method: req.method,
    path,
    action: 'answered',
  };
  if (path === '/log') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify(seen));
  }
  seen.push(record);
  if (path === '/hang') {
    record.action = 'hung';
    return;
  }
  if (path === '/close-reused' && socket.termlabSeq > 1) {
    record.action = 'closed';
    return socket.destroy();
  }
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-pod-uid': process.env.POD_UID ?? '' });
    res.end(JSON.stringify({ conn: record.conn, seq: record.seq }));
  });
});
server.on('connection', (socket) => {
  connections += 1;
  socket.termlabConn = connections;
});
// PORT for a test on the host (0: any free port, printed); in the pod the lab's 8080.
server.listen(Number(process.env.PORT ?? 8080), () => console.log(JSON.stringify({ port: server.address().port })));
