# Load samza_nb's notebook magics in every IPython shell and Jupyter (ipykernel) kernel.
#
# Copy this file to ~/.ipython/profile_default/ipython_config.py (or add its lines to yours; `ipython
# profile locate` prints the directory). Then %%samza_config, %%samza_task, %samza_run, ... work in every
# notebook without %load_ext samza_nb.
c = get_config()  # noqa: F821 - provided by IPython when it reads this file

c.InteractiveShellApp.extensions = ["samza_nb"]

# Optional settings of the magics (also settable in a notebook with %config SamzaMagics.<name> = ...):
# c.SamzaMagics.dashboard = "auto"          # auto | widgets | text | off
# c.SamzaMagics.refresh_interval = 0.2      # seconds between dashboard updates
