-- A source may name a PEM bundle of CAs to trust instead of the system's (an internal CA).
-- Only the path is stored; the file is read at each sync.
ALTER TABLE sources ADD COLUMN ca_cert TEXT;
