--
-- File io and table io tables, and the views over them, on the fixture region:
-- two files of class wait/io/file/app/log (and the class's bucket of a deleted
-- file), table shop.orders with indexes PRIMARY and idx_customer.
--
SELECT * FROM ps.setup_objects ORDER BY object_schema, object_name;
SELECT * FROM ps.file_instances ORDER BY file_name;
SELECT * FROM ps.file_summary_by_instance ORDER BY file_name;
SELECT * FROM ps.file_summary_by_event_name ORDER BY event_name;
SELECT * FROM ps.table_io_waits_summary_by_table;
SELECT * FROM ps.table_io_waits_summary_by_index_usage ORDER BY index_name NULLS LAST;

-- the waits name their object
SELECT thread_id, event_name, object_schema, object_name, index_name, object_type,
       operation, number_of_bytes, format_pico_time(timer_wait) AS wait
  FROM ps.events_waits_history_long WHERE object_type IS NOT NULL ORDER BY event_id;

SELECT * FROM sys.io_global_by_file_by_latency;
SELECT * FROM sys."x$io_global_by_file_by_latency";
SELECT * FROM sys.io_global_by_file_by_bytes;
SELECT * FROM sys."x$io_global_by_file_by_bytes";
SELECT * FROM sys.schema_table_statistics;
SELECT * FROM sys."x$schema_table_statistics";
