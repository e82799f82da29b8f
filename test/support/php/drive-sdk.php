<?php
/*
 * Drives the USAePay PHP SDK's own request code against whatever answers at https://sandbox.usaepay.com
 * (in the test: the tokengate sandbox, through test/support/tls-intercept.ts) and prints, as one JSON object,
 * how a PHP integrator's code would classify each answer. Uses the real SDK when USAEPAY_PHP_SDK_DIR points at
 * its checkout (lib/ loaded PSR-4 style, as Composer would), otherwise usaepay-sdk-mirror.php.
 *
 * Env: USAEPAY_KEY, USAEPAY_PIN, CUSTKEY (a customer with an approved, a declined and a partial card).
 */

$sdkDir = getenv('USAEPAY_PHP_SDK_DIR');
if ($sdkDir) {
	spl_autoload_register(function ($class) use ($sdkDir) {
		if (strncmp($class, 'USAePay\\', 8) !== 0) return;
		$file = $sdkDir . '/lib/' . str_replace('\\', '/', substr($class, 8)) . '.php';
		if (is_file($file)) require $file;
	});
	$sdk = 'real';
} else {
	require __DIR__ . '/usaepay-sdk-mirror.php';
	$sdk = 'mirror';
}

use USAePay\API;
use USAePay\Transactions;
use USAePay\Customers;
use USAePay\Customers\Payment_methods;

/** What integrators read off a transaction answer (the SDK returns the decoded object as is). */
function classify($r) {
	if (!is_object($r)) return ['kind' => gettype($r)];
	$out = [];
	foreach (['type', 'key', 'refnum', 'result_code', 'result', 'auth_amount', 'error', 'error_code', 'trantype', 'invoice'] as $f) {
		if (property_exists($r, $f)) $out[$f] = $r->$f;
	}
	if (isset($r->creditcard)) $out['card'] = $r->creditcard->number ?? null;
	if (isset($r->batch)) $out['batchrefnum'] = $r->batch->batchrefnum ?? null;
	if (isset($r->savedcard)) $out['savedcard'] = $r->savedcard->key ?? null;
	return $out;
}

function attempt(callable $call) {
	try {
		return ['ok' => $call()];
	} catch (USAePay\Exception\ueException $e) {
		return ['ueException' => ['message' => $e->getMessage(), 'code' => $e->getCode()]];
	}
}

$key = getenv('USAEPAY_KEY');
$pin = getenv('USAEPAY_PIN');
$custkey = getenv('CUSTKEY');
$card = fn ($number) => ['cardholder' => 'PHP Shop', 'number' => $number, 'expiration' => '0930', 'cvc' => '123', 'avs_street' => '1234 Main', 'avs_zip' => '12345'];

API::setAuthentication($key, $pin);
API::setSubdomain('sandbox');
$out = ['sdk' => $sdk];

// Sales as the reference's PHP example builds them: an array with PHP values (here a float amount).
$out['approved'] = classify(Transactions::post(['command' => 'cc:sale', 'amount' => 10.0, 'creditcard' => $card('4000100011112224'), 'invoice' => 'php-1', 'save_card' => true]));
$out['declined'] = classify(Transactions::post(['command' => 'sale', 'amount' => 5.25, 'creditcard' => $card('4000300011112220'), 'invoice' => 'php-2']));
$out['partial'] = classify(Transactions::post(['command' => 'cc:sale', 'amount' => '20.00', 'amount_detail' => ['tax' => '1.00', 'tip' => 0.5], 'creditcard' => $card('4000000011112275'), 'invoice' => 'php-3']));
$out['unknownCommand'] = classify(Transactions::post(['command' => 'cc:teleport', 'amount' => '1.00']));

// Lists and single objects.
$list = Customers::get(['limit' => 5, 'offset' => 0]);
$out['customers'] = ['type' => $list->type, 'total' => $list->total, 'count' => count($list->data), 'first' => $list->data[0]->key, 'first_name' => $list->data[0]->first_name];
$one = Customers::get(['custkey' => $custkey]);
$out['customer'] = ['type' => $one->type, 'key' => $one->key, 'custom_fields' => count((array) $one->custom_fields), 'payment_methods' => count($one->payment_methods)];
$methods = Payment_methods::get(['custkey' => $custkey]);
$out['paymentMethods'] = ['type' => $methods->type, 'total' => $methods->total, 'keys' => array_map(fn ($m) => $m->key, $methods->data), 'expires' => $methods->data[0]->expires];
$pm = Payment_methods::get(['custkey' => $custkey, 'paymethod_key' => $methods->data[0]->key]);
$out['paymentMethod'] = ['type' => $pm->type, 'key' => $pm->key, 'ccnum4last' => $pm->ccnum4last];

// The card reference (spec §2.5) through the SDK's own call path, then charged as the reference's Token Sale.
$token = API::runCall('get', "/customers/$custkey/payment_methods/" . $methods->data[0]->key . '/cardref');
$out['cardref'] = ['type' => $token->type, 'cardref' => $token->cardref, 'expires' => $token->expires];
$out['tokenSale'] = classify(Transactions::post(['command' => 'sale', 'amount' => '3.00', 'creditcard' => ['number' => $token->cardref, 'cvc' => '123'], 'invoice' => 'php-4']));
$out['savedCardSale'] = classify(Transactions::post(['command' => 'sale', 'amount' => 4, 'creditcard' => ['number' => $out['approved']['savedcard'], 'cvc' => '123'], 'invoice' => 'php-5']));

// The wallet through the SDK's own calls (Customers::post/put/delete, Payment_methods::post/put/delete).
$created = Customers::post(['company' => 'PHP Shop', 'first_name' => 'Php', 'last_name' => 'Sdk', 'postalcode' => 90038]);
$out['customerCreated'] = ['type' => $created->type, 'key' => $created->key, 'custid' => $created->custid, 'postalcode' => $created->postalcode, 'payment_methods' => $created->payment_methods];
$updated = Customers::put(['custkey' => $created->key, 'company' => 'PHP Shop 2', 'postalcode' => '']);
$out['customerUpdated'] = ['company' => $updated->company, 'postalcode' => $updated->postalcode, 'first_name' => $updated->first_name];
$added = Payment_methods::post(['custkey' => $created->key, ['pay_type' => 'cc', 'number' => '4000100011112224', 'expiration' => '0930', 'default' => true], ['pay_type' => 'cc', 'number' => '5555444433332226', 'expiration' => '0930']]);
$out['methodsAdded'] = array_map(fn ($m) => ['sortord' => $m->sortord, 'ccnum4last' => $m->ccnum4last, 'pmid' => property_exists($m, 'pmid')], $added);
$renamed = Payment_methods::put(['custkey' => $created->key, 'paymethod_key' => $added[1]->key, 'method_name' => 'Renamed']);
$out['methodUpdated'] = ['key' => $renamed->key === $added[1]->key, 'method_name' => $renamed->method_name, 'sortord' => $renamed->sortord];
$out['methodDeleted'] = Payment_methods::delete(['custkey' => $created->key, 'paymethod_key' => $added[1]->key]);
$out['methodGone'] = attempt(fn () => Payment_methods::get(['custkey' => $created->key, 'paymethod_key' => $added[1]->key]));
$out['notAnArray'] = attempt(fn () => API::runCall('post', '/customers/' . $created->key . '/payment_methods', ['pay_type' => 'cc', 'number' => '4000100011112224', 'expiration' => '0930']));
$out['customerDeleted'] = Customers::delete(['custkey' => $created->key]);
$out['customerGone'] = attempt(fn () => Customers::get(['custkey' => $created->key]));

// Errors the SDK turns into exceptions: unknown customer, then a wrong PIN.
$out['missingCustomer'] = attempt(fn () => Customers::get(['custkey' => 'nosuchcustomer00']));
API::setAuthentication($key, $pin . '9');
$out['wrongPin'] = attempt(fn () => Customers::get(['limit' => 1]));

echo json_encode($out), "\n";
