-- Limit policies: shadow mode (evaluate and report, never refuse) and what the gateway does when
-- its counter store (Redis) is unreachable. NULL failure_mode: the gateway's default (closed for
-- budgets and token rates, open for request rates with a per-replica fallback limit).
ALTER TABLE policies ADD COLUMN shadow boolean NOT NULL DEFAULT false;
ALTER TABLE policies ADD COLUMN failure_mode text CHECK (failure_mode IS NULL OR failure_mode IN ('open', 'closed'));
