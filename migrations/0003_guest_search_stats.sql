-- The planner's estimate for `search_grams @> ARRAY[kw]` comes from the column's most common
-- elements; with the default target a rare two-character name is estimated at 0.5% of the table
-- and the list walks the ordering index instead of the GIN index. A larger target keeps the
-- estimates close, so short keywords answer from the GIN index.
ALTER TABLE guests ALTER COLUMN search_grams SET STATISTICS 2000;
