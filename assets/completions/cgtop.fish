# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_cgtop_global_optspecs
    string join \n root= d/delay= depth= b/batch n/iterations= json brief read-only mouse machine-cpu max-kept-fds= columns= sort= reverse flat kernel-names openmetrics o/output= exposition= filter= pid= config= no-config h/help V/version
end

function __fish_cgtop_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_cgtop_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_cgtop_using_subcommand
    set -l cmd (__fish_cgtop_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c cgtop -n "__fish_cgtop_needs_command" -l root -d 'Read this directory instead of the cgroup2 mount: a delegated subtree, or any tree laid out like cgroupfs (a fixture)' -r -F
complete -c cgtop -n "__fish_cgtop_needs_command" -s d -l delay -d 'Seconds between refreshes (0.1 to 3600)' -r
complete -c cgtop -n "__fish_cgtop_needs_command" -l depth -d 'Show at most N levels below the start group' -r
complete -c cgtop -n "__fish_cgtop_needs_command" -s n -l iterations -d 'Stop after N refreshes (batch and JSON)' -r
complete -c cgtop -n "__fish_cgtop_needs_command" -l max-kept-fds -d 'Keep at most N files open between refreshes (each costs the kernel about a page of memory; beyond it files are opened per read)' -r
complete -c cgtop -n "__fish_cgtop_needs_command" -l columns -d 'The figure columns of the tree and of --batch, comma-separated: cpu, thr (throttled %), mem, mempct (% of memory.max), swap, read, write, pids, psi (highest pressure some avg10). Default: cpu,mem,read,write,pids. In the full-screen view F2 (or C) chooses' -r
complete -c cgtop -n "__fish_cgtop_needs_command" -l sort -d 'Sort by COLUMN: name, or a column as --columns names it (default cpu, highest first); the tree sorts each group\'s children' -r
complete -c cgtop -n "__fish_cgtop_needs_command" -s o -l output -d 'With --openmetrics: write FILE atomically (a temporary file beside it, then rename) instead of printing' -r -F
complete -c cgtop -n "__fish_cgtop_needs_command" -l exposition -d 'With --openmetrics: the exposition format. `text` is the Prometheus text format 0.0.4, which node_exporter\'s textfile collector reads (it parses *.prom files as text and refuses OpenMetrics)' -r -f -a "openmetrics\t'OpenMetrics 1.0.0 (what `serve` answers a Prometheus that asks for it)'
text\t'The Prometheus text format 0.0.4 (node_exporter\'s textfile collector)'"
complete -c cgtop -n "__fish_cgtop_needs_command" -l filter -d 'Only the groups whose name contains PATTERN (case aside, as the full-screen view\'s / filter matches), their ancestors and their subtrees: in -b, --json and --openmetrics; the full-screen view starts with it as its / filter' -r
complete -c cgtop -n "__fish_cgtop_needs_command" -l pid -d 'Start at the group that holds process PID: selected, its path unfolded, the process highlighted on the process page; with -b or --json, that group alone (and --depth levels below it). Refused (exit 2) for a thread id, a process that is not there, or one outside the view' -r
complete -c cgtop -n "__fish_cgtop_needs_command" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/cgtop/config.toml' -r -F
complete -c cgtop -n "__fish_cgtop_needs_command" -s b -l batch -d 'Print plain text refreshes (like top -b) instead of the full-screen view'
complete -c cgtop -n "__fish_cgtop_needs_command" -l json -d 'Print one JSON object per refresh (JSON Lines) with every group\'s raw counters, limits and rates; see README "JSON output"'
complete -c cgtop -n "__fish_cgtop_needs_command" -l brief -d 'With --json: only what the tree shows (cpu.stat, memory.current, io.stat, pids, cgroup.events) and the rates; no limits, pressure or memory.stat. Reads 5 files a group through kept descriptors instead of about 25 opened anew: for big hosts and short intervals'
complete -c cgtop -n "__fish_cgtop_needs_command" -l read-only -d 'Never write to the hierarchy (every changing action is disabled)'
complete -c cgtop -n "__fish_cgtop_needs_command" -l mouse -d 'Capture the mouse (off by default so that the terminal\'s own selection and copy keep working)'
complete -c cgtop -n "__fish_cgtop_needs_command" -l machine-cpu -d 'Show CPU % as a share of the whole machine instead of one core'
complete -c cgtop -n "__fish_cgtop_needs_command" -l reverse -d 'Sort the other way: lowest first (with --sort name, Z to A)'
complete -c cgtop -n "__fish_cgtop_needs_command" -l flat -d 'Every group in one list, sorted, each with its whole path, instead of the tree (the view\'s F5; -b prints it so)'
complete -c cgtop -n "__fish_cgtop_needs_command" -l kernel-names -d 'Name groups by their kernel names (docker-<id>.scope), not by who they are (web-1 · docker 046c7a5b3d2e): the view\'s w; for scripts that read -b\'s names'
complete -c cgtop -n "__fish_cgtop_needs_command" -l openmetrics -d 'Print one OpenMetrics exposition of GROUP and below and exit (for node_exporter\'s textfile collector, or a cron job); see README "Prometheus"'
complete -c cgtop -n "__fish_cgtop_needs_command" -l no-config -d 'Read no config file: every setting at its default'
complete -c cgtop -n "__fish_cgtop_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cgtop -n "__fish_cgtop_needs_command" -s V -l version -d 'Print version'
complete -c cgtop -n "__fish_cgtop_needs_command" -a "record" -d 'Record the tree\'s figures, limits and the processes of the busiest groups to FILE (zstd frames, flushed every refresh), for `cgtop replay` here or on another machine'
complete -c cgtop -n "__fish_cgtop_needs_command" -a "replay" -d 'Print a recording\'s refreshes as the live -b or --json run printed them'
complete -c cgtop -n "__fish_cgtop_needs_command" -a "serve" -d 'Serve /metrics over HTTP for Prometheus (OpenMetrics or the Prometheus text format by content negotiation); reads only, never writes to the hierarchy'
complete -c cgtop -n "__fish_cgtop_needs_command" -a "export-log" -d 'Write the changes in the action log as a reviewable shell script, with an undo script beside it'
complete -c cgtop -n "__fish_cgtop_needs_command" -a "completions" -d 'Print the shell completion script for SHELL (bash, zsh, fish)'
complete -c cgtop -n "__fish_cgtop_needs_command" -a "man" -d 'Print the man page (roff) to stdout'
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -l filter -d 'Record only the groups whose name contains PATTERN (case aside, as the / filter matches), their ancestors and their subtrees' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -s o -l output -d 'The recording: a new file (mode 0600), never a symlink; an existing one is refused unless --append' -r -F
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -s d -l delay -d 'Seconds between samples (0.1 to 3600)' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -s n -l iterations -d 'Stop after N samples past the first (as -b -n N prints N)' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -l max-size -d 'Keep FILE under SIZE (10M, 1G): at the cap FILE becomes FILE.1 (replacing an older FILE.1) and a new FILE begins, so at most about twice SIZE is on disk; with --stop, the recording ends instead' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -l sort -d 'Sort -b\'s table by COLUMN (as `cgtop --sort`)' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -l root -d 'Read this directory instead of the cgroup2 mount (as `cgtop --root`)' -r -F
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -l depth -d 'Record at most N levels below the start group' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -l max-kept-fds -d 'Keep at most N files open between samples' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -l append -d 'Add to FILE if it exists (a regular file of this user\'s with one link)'
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -l stop -d 'With --max-size: stop at the cap instead of rotating'
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -l no-processes -d 'Do not record the processes of the busiest groups'
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -s b -l batch -d 'Also print each refresh recorded as -b prints it'
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -l json -d 'Also print each refresh recorded as --json --brief prints it'
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -l reverse -d 'Sort -b\'s table the other way (as `cgtop --reverse`)'
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -l flat -d 'Print -b\'s table as one list with whole paths (as `cgtop --flat`)'
complete -c cgtop -n "__fish_cgtop_using_subcommand record" -s h -l help -d 'Print help'
complete -c cgtop -n "__fish_cgtop_using_subcommand replay" -s n -l iterations -d 'Print at most N refreshes' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand replay" -l columns -d 'The figure columns of -b (as `cgtop --columns`)' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand replay" -l sort -d 'Sort -b\'s table by COLUMN (as `cgtop --sort`)' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand replay" -s b -l batch -d 'Print the refreshes as -b text'
complete -c cgtop -n "__fish_cgtop_using_subcommand replay" -l json -d 'Print the refreshes as JSON Lines, as `cgtop --json --brief` printed them live (a recording keeps what --brief prints)'
complete -c cgtop -n "__fish_cgtop_using_subcommand replay" -l brief -d 'Accepted for symmetry with `cgtop --json --brief`: replay --json always prints what --brief prints'
complete -c cgtop -n "__fish_cgtop_using_subcommand replay" -l reverse -d 'Sort -b\'s table the other way (as `cgtop --reverse`)'
complete -c cgtop -n "__fish_cgtop_using_subcommand replay" -l flat -d 'Print -b\'s table as one list with whole paths (as `cgtop --flat`)'
complete -c cgtop -n "__fish_cgtop_using_subcommand replay" -s h -l help -d 'Print help'
complete -c cgtop -n "__fish_cgtop_using_subcommand serve" -l listen -d 'The address to listen on: HOST:PORT, or :PORT for every address (loopback 127.0.0.1:19586 by default; expose it to the network only behind a firewall: group names are visible)' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand serve" -l root -d 'Read this directory instead of the cgroup2 mount (as `cgtop --root`)' -r -F
complete -c cgtop -n "__fish_cgtop_using_subcommand serve" -l depth -d 'Expose at most N levels below the start group' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand serve" -l filter -d 'Expose only the groups whose name contains PATTERN (case aside, as the full-screen view\'s / filter matches), their ancestors and their subtrees' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand serve" -l min-interval -d 'Read the hierarchy at most once per SECS (0 to 3600); scrapes within it share the last reading' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand serve" -l max-kept-fds -d 'Keep at most N files open between readings' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand serve" -s h -l help -d 'Print help'
complete -c cgtop -n "__fish_cgtop_using_subcommand export-log" -l log -d 'The action log to read (default: the one cgtop writes, $XDG_STATE_HOME/cgtop/actions.log)' -r -F
complete -c cgtop -n "__fish_cgtop_using_subcommand export-log" -l since -d 'Only the changes at or after TIME: UTC as the log writes it (2024-05-01T12:00:00Z), a date (2024-05-01), 2024-05-01T12:00, or an age (30m, 2h, 1d)' -r
complete -c cgtop -n "__fish_cgtop_using_subcommand export-log" -s o -l output -d 'Write the script to FILE (a new file, mode 0700) and its undo beside it (FILE.sh -> FILE.undo.sh); without -o the script goes to stdout' -r -F
complete -c cgtop -n "__fish_cgtop_using_subcommand export-log" -l undo -d 'Write the undo script to FILE (default: beside -o\'s)' -r -F
complete -c cgtop -n "__fish_cgtop_using_subcommand export-log" -l persist -d 'systemd units: systemctl set-property without --runtime, so that the change outlives a reboot'
complete -c cgtop -n "__fish_cgtop_using_subcommand export-log" -l force -d 'Replace existing output files (regular files of this user\'s only)'
complete -c cgtop -n "__fish_cgtop_using_subcommand export-log" -s h -l help -d 'Print help'
complete -c cgtop -n "__fish_cgtop_using_subcommand completions" -s h -l help -d 'Print help'
complete -c cgtop -n "__fish_cgtop_using_subcommand man" -s h -l help -d 'Print help'
complete -c cgtop -n "__fish_cgtop_using_subcommand completions" -f -a "bash zsh fish"
