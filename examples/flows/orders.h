// The order-processing flow of the deployment examples (worker_main.cc serves it,
// producer.cc starts it inside its own transaction): reserve stock for every line, charge,
// then confirm. Its handlers live in orders.cc, the only TU that compiles them; its signature
// (orders_signature.h) is all a producer includes.
#ifndef PGFLOW_EXAMPLES_FLOWS_ORDERS_H_
#define PGFLOW_EXAMPLES_FLOWS_ORDERS_H_

#include "flows/orders_signature.h"
#include "pgflow/flow_definition.h"

namespace orders {

// The flow with its handlers, for the worker (EdgeWorker::start takes a definition).
const pgflow::FlowDefinition& definition();

}  // namespace orders

#endif  // PGFLOW_EXAMPLES_FLOWS_ORDERS_H_
