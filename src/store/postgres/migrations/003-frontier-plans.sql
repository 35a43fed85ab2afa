-- A run's queue is read host by host (decision 112), through frontier_host_todo. frontier_todo,
-- the same rows ordered by seq alone, let the planner read a host's rows through it and filter the
-- run's other hosts out, which it chose while the table had no statistics (decision 113): one
-- take cost a read of the whole run's queue. Every query it served is served by
-- frontier_host_todo's run_seq prefix.
DROP INDEX frontier_todo;
