-- A path claim handed over keeps its row and takes a new token (src/domain/path-moves.ts). To a
-- daemon that reads the claims by their row versions, that was a new token with nothing gone:
-- its path index kept the old one too, so its checks and its wait-for graph named the previous
-- holder beside the new one until the claim's lease ended. The old token now leaves its key in
-- `airlock_gone`, as a deleted row's does.
CREATE TRIGGER path_claims_bury_moved AFTER UPDATE OF token ON path_claims
  FOR EACH ROW WHEN (OLD.token IS DISTINCT FROM NEW.token) EXECUTE FUNCTION airlock_bury('token');
