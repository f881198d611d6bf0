"""What the notebook shows of a job: the monitor and its snapshots (JobView), the live dashboard, charts and
the text status."""
