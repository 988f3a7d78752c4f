\echo Use "CREATE EXTENSION null_fdw" to load this file. \quit

CREATE FUNCTION null_fdw_handler() RETURNS fdw_handler
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT;
CREATE FUNCTION null_fdw_validator(text[], oid) RETURNS void
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT;
CREATE FOREIGN DATA WRAPPER null_fdw HANDLER null_fdw_handler VALIDATOR null_fdw_validator;
