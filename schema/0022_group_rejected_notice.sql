-- Message groups (issue 25): a consumer writes its grouped acks (with their keys' promotions)
-- and its claim in one round trip, and psycopg2 returns only the last statement's rows (the
-- claim's). How many grouped acks the lease fence refused (a zombie's late acks) comes back
-- as a NOTICE instead, raised by finish_grouped_messages through this function.
CREATE FUNCTION citeq_grouped_acks_rejected(n bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    IF n > 0 THEN
        RAISE NOTICE 'citeq_grouped_acks_rejected %', n;
    END IF;
    RETURN n;
END;
$$;
