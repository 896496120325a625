/**
 * The gateway's counters, served as Prometheus text at `GET /metrics`:
 * requests by kind and status class, placements by node, paused sandboxes
 * moved between nodes, and forwards that found a node unreachable.
 *
 * @module
 */

function escape(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

/** In-memory counters of one gateway process. */
export class GatewayMetrics {
  readonly #requests = new Map<string, number>();
  readonly #placements = new Map<string, number>();
  #moves = 0;
  #unreachable = 0;

  /** Counts a request of `kind` (`control`, `data`) answered with `status`. */
  request(kind: string, status: number): void {
    const key = `${kind}|${Math.floor(status / 100)}xx`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
  }

  /** Counts `n` sandboxes placed on `node`. */
  placed(node: string, n = 1): void {
    this.#placements.set(node, (this.#placements.get(node) ?? 0) + n);
  }

  /** Counts a paused sandbox moved to another node. */
  moved(): void {
    this.#moves++;
  }

  /** Counts a forward that found its node unreachable. */
  nodeUnreachable(): void {
    this.#unreachable++;
  }

  /** The Prometheus text exposition. */
  render(): string {
    const lines = [
      '# HELP aenv_gateway_requests_total Requests answered, by kind and status class.',
      '# TYPE aenv_gateway_requests_total counter',
    ];
    for (const [k, v] of this.#requests) {
      const [kind = '', status = ''] = k.split('|');
      lines.push(
        `aenv_gateway_requests_total{kind="${escape(kind)}",status="${escape(status)}"} ${v}`,
      );
    }
    lines.push('# HELP aenv_gateway_placements_total Sandboxes placed, by node.');
    lines.push('# TYPE aenv_gateway_placements_total counter');
    for (const [node, v] of this.#placements) {
      lines.push(`aenv_gateway_placements_total{node="${escape(node)}"} ${v}`);
    }
    lines.push('# HELP aenv_gateway_moves_total Paused sandboxes moved to another node.');
    lines.push('# TYPE aenv_gateway_moves_total counter');
    lines.push(`aenv_gateway_moves_total ${this.#moves}`);
    lines.push('# HELP aenv_gateway_node_unreachable_total Forwards whose node did not answer.');
    lines.push('# TYPE aenv_gateway_node_unreachable_total counter');
    lines.push(`aenv_gateway_node_unreachable_total ${this.#unreachable}`);
    return `${lines.join('\n')}\n`;
  }
}
