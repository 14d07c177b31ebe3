-- The trace of the request that made an event (W3C traceparent), when traces are sent: its
-- webhook deliveries carry it on (docs/webhooks.md, "Traces"). NULL for events of untraced
-- requests and of the daemon's own jobs.
ALTER TABLE events ADD COLUMN traceparent TEXT;
