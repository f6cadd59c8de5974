#!/usr/bin/perl
# tests/vm/scale/churn.pl - creates and removes cgroups continuously under
# --parent for --secs seconds, while cgtop watches (tests/vm/scale/guest.sh).
#
#  * --rate groups created per second (and as many removed), ~40 alive at a
#    time; one in five gets a child group too (two levels to remove);
#  * names are reused (c0 .. c119), so a path often comes back as a new
#    group with a new inode between two of cgtop's refreshes;
#  * four times a second a forked child (no exec) spins in a new group
#    busyN (N reused, 0..5) and is killed about a second later, so groups
#    with a CPU history vanish and come back under the same name.
#
# usage: churn.pl --parent DIR [--secs 30] [--rate 300] [--window 40]
# Prints one summary line "churn: ..."; exit status 1 if a group could not be
# created or removed.  Only writes below --parent.
use strict;
use warnings;
use Getopt::Long;
use Time::HiRes qw(time sleep);
use POSIX ();

my ($parent, $secs, $rate, $window, $names) = (undef, 30, 300, 40, 120);
GetOptions(
    'parent=s' => \$parent,
    'secs=f'   => \$secs,
    'rate=f'   => \$rate,
    'window=i' => \$window,
) or die "usage: churn.pl --parent DIR [--secs S] [--rate R] [--window W]\n";
die "churn.pl: --parent DIR is needed\n" unless defined $parent && -d $parent;

my ($created, $nested, $removed, $retries, $errors) = (0, 0, 0, 0, 0);
my ($spun, $k, $j) = (0, 0, 0);
my (@live, %live, @spinners);

sub remove_group {    # remove_group DIR (its child first); false on failure
    my ($d) = @_;
    for my $sub ("$d/sub", $d) {
        next unless -d $sub;
        my $ok = 0;
        for my $try (1 .. 50) {
            if (rmdir $sub) { $ok = 1; last }
            last if $!{ENOENT};
            $retries++;
            sleep 0.01;    # EBUSY just after the last process left
        }
        unless ($ok || !-d $sub) {
            warn "churn.pl: rmdir $sub: $!\n";
            $errors++;
            return 0;
        }
        $removed++;
    }
    return 1;
}

sub start_spinner {
    my $d = "$parent/busy" . ($j++ % 6);
    return if -d $d;    # the previous one of that name is still there
    unless (mkdir $d) { warn "churn.pl: mkdir $d: $!\n"; $errors++; return }
    $created++;
    my $pid = fork();
    if (!defined $pid) { warn "churn.pl: fork: $!\n"; $errors++; remove_group($d); return }
    if ($pid == 0) {
        open(my $f, '>', "$d/cgroup.procs") or POSIX::_exit(1);
        print $f "$$\n";
        close($f) or POSIX::_exit(1);
        1 while 1;
    }
    $spun++;
    push @spinners, [$pid, $d, time + 1.0];
}

sub stop_spinner {
    my ($s) = @_;
    kill 'KILL', $s->[0];
    waitpid($s->[0], 0);
    remove_group($s->[1]);
}

my $t0 = time;
my $end = $t0 + $secs;
my $next_spin = $t0;
while ((my $now = time) < $end) {
    if ($now >= $next_spin) {
        start_spinner();
        $next_spin += 0.25;
    }
    while (@spinners && $spinners[0][2] <= $now) {
        stop_spinner(shift @spinners);
    }
    if ($rate > 0 && $created >= ($now - $t0) * $rate) {
        sleep 0.002;
        next;
    }
    my $name = 'c' . ($k++ % $names);
    next if $live{$name};
    my $d = "$parent/$name";
    unless (mkdir $d) { warn "churn.pl: mkdir $d: $!\n"; $errors++; last if $errors > 20; next }
    $created++;
    if ($k % 5 == 0) {
        if (mkdir "$d/sub") { $created++; $nested++ }
        else { warn "churn.pl: mkdir $d/sub: $!\n"; $errors++ }
    }
    push @live, $name;
    $live{$name} = 1;
    while (@live > $window) {
        my $old = shift @live;
        delete $live{$old};
        remove_group("$parent/$old");
    }
}
my $took = time - $t0;
stop_spinner($_) for @spinners;
remove_group("$parent/$_") for @live;
printf "churn: %d groups created (%d nested, %d with a spinning process) and %d removed in %.1f s: "
    . "%.0f created/s, %.0f mkdir+rmdir/s; rmdir retries %d, errors %d\n",
    $created, $nested, $spun, $removed, $took, $created / $took, ($created + $removed) / $took,
    $retries, $errors;
exit($errors ? 1 : 0);
