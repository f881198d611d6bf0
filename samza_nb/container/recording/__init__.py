"""Record and replay of a run's schedule: the recording's format (:mod:`.recording`), its writer
(:mod:`.recording_writer`), the message digests beside it (:mod:`.message_digests`), the loop's schedule
hooks that record or force the order (:mod:`.schedule`), and replay (:mod:`.replay`,
:mod:`.replay_checks`)."""
