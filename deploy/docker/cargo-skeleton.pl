#!/usr/bin/perl
# Writes a "cargo skeleton" of the workspace for the Dockerfile's dependency
# layer: every workspace manifest, Cargo.toml/Cargo.lock at the root, and one
# stub source file per target that cargo needs to find when it loads the
# workspace. Building the skeleton compiles all third-party dependencies; the
# real sources are copied afterwards, so source edits do not rebuild them.
#
#   cargo metadata --no-deps --format-version 1 --offline > meta.json
#   perl cargo-skeleton.pl meta.json /skeleton [/sources PACKAGE]
#
# With /sources and PACKAGE it also writes what building PACKAGE needs, and
# only that: the skeleton, with the real directories (minus target/) of
# PACKAGE and the workspace packages it depends on by path. The Dockerfile
# builds from that copy, so edits to docs, deploy recipes, web sources or
# workspace members duet does not use (bench/) do not rerun the Rust build.
#
# It reads `cargo metadata` instead of a hand-kept list so that a new workspace
# member (bench/, ...) needs no Dockerfile change. Perl and its core JSON::PP
# module ship with the rust image's build tools; no jq or Python needed.
use strict;
use warnings;
use JSON::PP;
use File::Path qw(make_path);
use File::Basename qw(dirname);
use File::Copy qw(copy);

my ($meta_file, $out, $sources, $wanted) = @ARGV;
die "usage: $0 METADATA.json OUTDIR [SOURCES_OUTDIR PACKAGE]\n"
    unless defined $out && (defined $sources) == (defined $wanted);

my $meta = do {
    local $/;
    open my $fh, '<', $meta_file or die "$meta_file: $!\n";
    decode_json(<$fh>);
};
my $root = $meta->{workspace_root};

sub rel {
    my ($path) = @_;
    $path =~ s{^\Q$root\E/}{} or die "not inside the workspace: $path\n";
    return $path;
}

sub put {
    my ($path, $text) = @_;
    make_path(dirname($path));
    open my $fh, '>', $path or die "$path: $!\n";
    print $fh $text;
    close $fh;
}

sub copy_to_out {
    my ($rel) = @_;
    make_path(dirname("$out/$rel"));
    copy("$root/$rel", "$out/$rel") or die "copying $rel: $!\n";
}

make_path($out);
copy_to_out('Cargo.toml');
copy_to_out('Cargo.lock');
for my $pkg (@{ $meta->{packages} }) {
    my $manifest = rel($pkg->{manifest_path});
    copy_to_out($manifest);
    my $toml = do { local $/; open my $fh, '<', "$root/$manifest" or die; <$fh> };
    for my $target (@{ $pkg->{targets} }) {
        my %kind = map { $_ => 1 } @{ $target->{kind} };
        my $src = "$out/" . rel($target->{src_path});
        if ($kind{lib} || $kind{rlib} || $kind{'proc-macro'} || $kind{cdylib} || $kind{staticlib}) {
            put($src, "");
        } elsif ($kind{bin} || $kind{'custom-build'}) {
            put($src, "fn main() {}\n");
        } else {
            # Tests, benches and examples are found by directory scan unless a
            # manifest declares them; only declared ones must exist to load
            # the workspace. Stubbing the scanned ones too would make every
            # new test file invalidate the dependency layer.
            my ($k) = grep { $kind{$_} } qw(test bench example);
            next unless $k && $toml =~ /^\s*\[\[\s*\Q$k\E\s*\]\]/m;
            put($src, "fn main() {}\n");
        }
    }
}

exit 0 unless defined $sources;

# PACKAGE and its path dependencies (normal and build; dev-dependencies are
# not needed to build it), found through the manifests' directories.
my %by_dir = map { dirname($_->{manifest_path}) => $_ } @{ $meta->{packages} };
my ($start) = grep { $_->{name} eq $wanted } @{ $meta->{packages} };
die "no workspace package named $wanted\n" unless $start;
my %needed;
my @queue = ($start);
while (my $pkg = shift @queue) {
    next if $needed{ $pkg->{name} }++;
    for my $dep (@{ $pkg->{dependencies} }) {
        next unless defined $dep->{path};
        next if defined $dep->{kind} && $dep->{kind} eq 'dev';
        my $target = $by_dir{ $dep->{path} } or die "path dependency outside the workspace: $dep->{path}\n";
        push @queue, $target;
    }
}
system('cp', '-a', "$out/.", "$sources/") == 0 or die "copying the skeleton failed\n";
for my $pkg (grep { $needed{ $_->{name} } } @{ $meta->{packages} }) {
    my $dir = dirname(rel($pkg->{manifest_path}));
    die "a package at the workspace root is not supported here\n" if $dir eq '.';
    system('rm', '-rf', "$sources/$dir") == 0 or die;
    make_path("$sources/$dir");
    system('cp', '-a', "$root/$dir/.", "$sources/$dir/") == 0 or die "copying $dir failed\n";
    system('rm', '-rf', "$sources/$dir/target") == 0 or die;
}
print "real sources for $wanted: ", join(' ', sort keys %needed), "\n";
