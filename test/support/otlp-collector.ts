// Our own OpenTelemetry collector double: an OTLP/HTTP receiver (`POST /v1/traces`, the JSON encoding that
// @opentelemetry/exporter-trace-otlp-http sends) that keeps every span it is sent, flattened with its
// service name. Protobuf bodies are refused with 415, as a JSON-only receiver would.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}

const plain = (v: OtlpValue) => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;
const attrs = (list: OtlpKeyValue[] = []) => Object.fromEntries(list.map((a) => [a.key, plain(a.value)]));

export async function startOtlpCollector(): Promise<{
  endpoint: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}> {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return void res.writeHead(415).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attrs(rs.resource?.attributes)['service.name']);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              attributes: attrs(s.attributes),
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
