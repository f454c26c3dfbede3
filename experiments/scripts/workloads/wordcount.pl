# The Perl workload traced for the program tables: random words counted in a hash, sorted,
# joined and rewritten with a regular expression.   perl wordcount.pl N   (N thousand words)
use strict;
use warnings;
my $scale = $ARGV[0] // 300;
srand(1);
my %count;
for my $i (1 .. 1000 * $scale) {
  my $w = join("", map { chr(97 + int(rand(10))) } 1 .. (2 + int(rand(10))));
  $count{$w}++;
}
my @ranked = sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count;
my $joined = join(",", @ranked[0 .. ($#ranked < 999 ? $#ranked : 999)]);
$joined =~ s/(a+)/uc($1)/ge;
print scalar(@ranked), " ", length($joined), "\n";
