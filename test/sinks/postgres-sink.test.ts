import { describe, expect, it } from "vitest";
import { createSink, PostgresSink } from "../../src/sinks/index.ts";
import { withTestSchema } from "../helpers/postgres.ts";
import { describeSinkContract, WIDGETS, widget } from "./sink-contract.ts";

describeSinkContract(
  "PostgreSQL",
  async () => {
    const schema = await withTestSchema();
    return { open: () => createSink(schema.url), cleanup: () => schema.cleanup() };
  },
  { softDeletes: true },
);

describe("PostgreSQL sink", () => {
  it("lets several workers prepare and load one warehouse at once", async () => {
    const schema = await withTestSchema();
    const sinks = [new PostgresSink(schema.url), new PostgresSink(schema.url), new PostgresSink(schema.url)];
    try {
      await Promise.all(sinks.map((s) => s.prepare([WIDGETS])));
      await Promise.all(
        sinks.map((s, i) =>
          s.commit({
            runId: `r${i}`,
            upsert: { table: "widgets", rows: [widget(`w${i}`), widget("shared")] },
          }),
        ),
      );
      const rows = await sinks[0]!.readTable("widgets");
      expect(rows.map((r) => r.widget_id)).toEqual(["shared", "w0", "w1", "w2"]);
      const migrations = await schema.pool.query("SELECT version FROM schema_migrations ORDER BY version");
      expect(migrations.rows.map((r) => r.version)).toEqual([1, 2, 3, 4, 5]);
    } finally {
      await Promise.all(sinks.map((s) => s.close()));
      await schema.cleanup();
    }
  });

  it("types its columns for PostgreSQL", async () => {
    const schema = await withTestSchema();
    const sink = await createSink(schema.url);
    try {
      await sink.prepare([WIDGETS]);
      const res = await schema.pool.query(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'widgets'",
        [schema.schema],
      );
      const types = Object.fromEntries(res.rows.map((r) => [r.column_name, r.data_type]));
      expect(types).toMatchObject({
        amount_cents: "bigint",
        sent_at: "timestamp with time zone",
        start_date: "date",
        tags: "ARRAY",
        note: "jsonb",
        _raw: "jsonb",
        is_active: "boolean",
      });
    } finally {
      await sink.close();
      await schema.cleanup();
    }
  });
});
