#!/bin/sh
# Starts one node of docker-compose.yml's "cluster" profile: `cluster-node.sh <node name>`.
# The routes carry the route password, so they are built here from the secret file rather than
# written in a config file or in the compose file (where `docker inspect` would show them).
# NATS_CLUSTER_NODES: the nodes' host names, separated by spaces; each node routes to every one
# (nats-server ignores the route to itself).
set -eu
name="${1:?usage: cluster-node.sh <node name>}"
password_file="${NATS_ROUTE_PASSWORD_FILE:-/run/secrets/nats-route-password}"
NATS_ROUTE_PASSWORD="$(tr -d '\r\n' < "$password_file")"
case "$NATS_ROUTE_PASSWORD" in
  "" | *[!0-9A-Za-z]*)
    echo "cluster-node.sh: $password_file must hold a password of letters and digits (openssl rand -hex 32)" >&2
    exit 1
    ;;
esac
# cluster.conf reads it as $NATS_ROUTE_PASSWORD for the cluster's authorization block.
export NATS_ROUTE_PASSWORD
routes=""
for node in ${NATS_CLUSTER_NODES:?set NATS_CLUSTER_NODES to the nodes of the cluster}; do
  routes="${routes:+$routes,}nats://route:${NATS_ROUTE_PASSWORD}@${node}:6222"
done
exec nats-server --config /etc/nats/cluster.conf --name "$name" --routes "$routes"
