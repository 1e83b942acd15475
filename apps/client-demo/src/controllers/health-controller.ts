import type { Request, Response } from 'express';
import type { Database } from '../db/database.js';

/**
 * `GET /healthz`: 200 `{"status":"ok"}` when the database answers, 503 otherwise. The WAF is
 * not part of it: a WAF without a snapshot yet (or failing open) must not take instances out
 * of a load balancer.
 */
export class HealthController {
  constructor(private readonly database: Database) {}

  show = async (_req: Request, res: Response): Promise<void> => {
    try {
      await this.database.ping();
      res.json({ status: 'ok', database: this.database.dialect });
    } catch {
      res.status(503).json({ status: 'unavailable', database: this.database.dialect });
    }
  };
}
