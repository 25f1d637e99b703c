// The least any HTTP proxy can do, for the proxy-load bench: a Node process that forwards each request to the
// upstream with node:http (as ctxkit serve does, keep-alive) and sends the answer back, keeping nothing (no auth,
// sessions, governance or store). Run as `node bare-proxy.ts <upstream origin>`; prints `listening on <url>` once
// it accepts connections.
import { createServer, request as forward } from "node:http";

const upstream = process.argv[2];
if (upstream === undefined) throw new Error("usage: node bare-proxy.ts <upstream origin>");

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const body = Buffer.concat(chunks);
    const failed = (error: unknown) => {
      response.writeHead(502, { "content-type": "text/plain" });
      response.end(String(error));
    };
    const outgoing = forward(
      new URL(request.url ?? "/", upstream),
      {
        method: request.method,
        headers: {
          "content-type": "application/json",
          "content-length": String(body.length),
          authorization: request.headers.authorization ?? "",
        },
      },
      (answer) => {
        const parts: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => parts.push(chunk));
        answer.on("end", () => {
          response.writeHead(answer.statusCode ?? 502, {
            "content-type": answer.headers["content-type"] ?? "",
          });
          response.end(Buffer.concat(parts));
        });
        answer.on("error", failed);
      },
    );
    outgoing.on("error", failed);
    outgoing.end(body);
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("bare proxy: no port");
  console.log(`listening on http://127.0.0.1:${address.port}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
