import pg from "pg";

/**
 * A one-connection pool whose client records the text of every query it sends (one per round trip; "(config)"
 * for a query given as a config object without text), to count what reaches the server.
 *
 * @example
 * const { pool, sent } = recordingPool(url);
 */
export function recordingPool(url: string): { pool: pg.Pool; sent: string[] } {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const sent: string[] = [];
  pool.on("connect", (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
      const [given] = args as [string | { text?: unknown }];
      sent.push(typeof given === "string" ? given : typeof given.text === "string" ? given.text : "(config)");
      return query(...args);
    };
  });
  return { pool, sent };
}
