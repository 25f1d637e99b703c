// The least any HTTP proxy can do, for the proxy-load bench: a Node process that forwards each request to the
// upstream with fetch and sends the answer back, keeping nothing (no auth, sessions, governance or store). Run as
// `node bare-proxy.ts <upstream origin>`; prints `listening on <url>` once it accepts connections.
import { createServer } from "node:http";

const upstream = process.argv[2];
if (upstream === undefined) throw new Error("usage: node bare-proxy.ts <upstream origin>");

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    fetch(new URL(request.url ?? "/", upstream), {
      method: request.method,
      headers: { "content-type": "application/json", authorization: request.headers.authorization ?? "" },
      body: request.method === "GET" ? undefined : Buffer.concat(chunks),
    })
      .then(async (answer) => {
        const body = Buffer.from(await answer.arrayBuffer());
        response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "" });
        response.end(body);
      })
      .catch((error: unknown) => {
        response.writeHead(502, { "content-type": "text/plain" });
        response.end(String(error));
      });
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("bare proxy: no port");
  console.log(`listening on http://127.0.0.1:${address.port}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
