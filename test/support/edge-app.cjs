// The edge tests' app (a sim image of its own): each answer names its pod, its connection and the request's
// ordinal on it. With RACE=1, a second request arriving on a kept-alive connection from the edge (it carries
// X-Forwarded-For; the kubelet's probes do not) finds the connection closed under it: the app's close racing
// the edge's reuse, made certain. SIGTERM is ignored (or, with CLOSE_ON_TERM=1, only its listener closes): the pod
// lives to the end of its grace, so whatever reaches it after its endpoint went is the edge's lag.
const http = require('node:http');

let connections = 0;
const server = http.createServer((req, res) => {
  const socket = req.socket;
  socket.termlabConn ??= ++connections;
  socket.termlabRequests = (socket.termlabRequests ?? 0) + 1;
  if (process.env.RACE === '1' && socket.termlabRequests === 2 && req.headers['x-forwarded-for']) {
    socket.destroy();
    return;
  }
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
  });
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        pod: process.env.HOSTNAME,
        conn: socket.termlabConn,
        req: socket.termlabRequests,
        method: req.method,
        size,
      }),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), process.env.HOST);
// CLOSE_ON_TERM=1: the listener closes at TERM (a new connection is refused), the process stays to its grace.
process.on('SIGTERM', () => {
  if (process.env.CLOSE_ON_TERM === '1') server.close();
});
